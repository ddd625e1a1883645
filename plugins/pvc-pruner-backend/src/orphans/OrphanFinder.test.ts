import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import { Entity } from '@backstage/catalog-model';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import {
  horizontalPodAutoscaler,
  KubeSim,
  manifest,
  pvc,
  statefulSet,
} from 'kube-sim';
import { eventually } from '../__testUtils__/eventually';
import { startFakeApiServer } from '../__testUtils__/fakeApiServer';
import { gatewaysTo, startShopSimulator } from '../__testUtils__/shopSimulator';
import { memoryDatabase } from '../__testUtils__/memoryJobStore';
import {
  ClusterAuth,
  ClusterCaches,
  ClusterRegistry,
  KubeGateway,
  KubeGateways,
  LocatedCluster,
} from '../kubernetes';
import { OrphanSnapshotPlanner } from '../snapshots';
import { OrphanSightingStore } from '../database';
import { OrphanAnnotator } from './OrphanAnnotator';
import { OrphanFinder } from './OrphanFinder';
import { WATCH_CACHE_TRIMMERS } from './orphanRule';

jest.setTimeout(20000);

let sim: KubeSim;
let gateways: KubeGateways;
/** The shared gateway of cluster demo, whose cache the finder reads. */
let demo: KubeGateway;
let demoCluster: LocatedCluster;
let caches: ClusterCaches;
let finder: OrphanFinder;
/** The demo cluster's cache, if ready; asking does not start one. */
const cacheOfDemo = () => caches.ready(demoCluster, demo, { start: false });

const target = {
  entity: {} as Entity,
  entityRef: 'component:default/db',
  labelSelector: 'app=db',
};

function volume(name: string, claim: string, reclaimPolicy: string) {
  return manifest({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: reclaimPolicy,
      claimRef: { namespace: 'shop', name: claim },
      csi: { driver: 'sim.csi.k8s.io', volumeHandle: name },
    },
  });
}

const HPAS = 'autoscaling/horizontalpodautoscalers';

/** The kept claims of the scan's StatefulSets, each with its reason and the autoscaler it names. */
const keptOf = (scan: Awaited<ReturnType<OrphanFinder['findForEntity']>>) =>
  scan.clusters.flatMap(c =>
    c.ok
      ? c.statefulSets.flatMap(s =>
          s.kept.map(k => [
            k.name,
            k.reason,
            k.autoscaler ?? k.autoscalersError ?? null,
          ]),
        )
      : [],
  );

/** Scans until `done` holds (the watch cache has what the test changed), at most 5 s. */
async function scanUntil(
  scanner: OrphanFinder,
  done: (scan: Awaited<ReturnType<OrphanFinder['findForEntity']>>) => boolean,
) {
  const deadline = Date.now() + 5000;
  let scan = await scanner.findForEntity(target);
  while (!done(scan) && Date.now() < deadline) {
    await new Promise(r => setTimeout(r, 20));
    scan = await scanner.findForEntity(target);
  }
  return scan;
}

const orphanNames = (
  scan: Awaited<ReturnType<OrphanFinder['findForEntity']>>,
) =>
  scan.clusters.flatMap(c =>
    c.ok ? c.statefulSets.flatMap(s => s.orphans.map(o => o.name)) : [],
  );

beforeAll(async () => {
  const started = await startShopSimulator();
  sim = started.sim;
  const labels = { app: 'db' };
  sim.store.create(
    'apps/statefulsets',
    statefulSet('db', { replicas: 1 }, 'shop', labels),
  );
  for (let i = 0; i < 3; i++) {
    sim.store.create('persistentvolumeclaims', {
      ...pvc(`data-db-${i}`, { volumeName: `pv-${i}` }, 'shop', labels),
      status: { phase: 'Bound', capacity: { storage: '1Gi' } },
    } as any);
    sim.store.create(
      'persistentvolumes',
      volume(`pv-${i}`, `data-db-${i}`, i === 2 ? 'Retain' : 'Delete'),
    );
  }
  sim.store.create(
    'pods',
    manifest({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'db-0', namespace: 'shop', labels },
      spec: {
        nodeName: 'node-1',
        containers: [{ name: 'db', image: 'db:1' }],
        volumes: [
          { name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } },
        ],
      },
    }),
  );
  gateways = gatewaysTo(sim);
  demo = await gateways.for('demo');
  demoCluster = (await gateways.list())[0];
});

beforeEach(() => {
  caches = new ClusterCaches({
    trim: WATCH_CACHE_TRIMMERS,
    logger: mockServices.logger.mock(),
    syncWaitMs: 5000,
    timing: { minBackoffMs: 20, maxBackoffMs: 100, minWatchMs: 0 },
  });
  finder = new OrphanFinder(gateways, caches);
  sim.clearRequests();
});

afterEach(async () => {
  await caches.stop();
  sim.clearFaults();
  for (const hpa of sim.store.list(HPAS, {}).items)
    sim.store.delete(HPAS, hpa.metadata.namespace, hpa.metadata.name);
});

afterAll(async () => {
  await sim.close();
});

describe('OrphanFinder with a watch cache', () => {
  it('reads live until the cache is synced, then answers the same from the cache without asking the cluster', async () => {
    const live = await finder.findForEntity(target);
    expect(orphanNames(live)).toEqual(['data-db-1', 'data-db-2']);
    expect(sim.requests().map(r => `${r.verb} ${r.path}`)).toEqual(
      expect.arrayContaining([
        'list /api/v1/namespaces/shop/persistentvolumeclaims',
        'get /api/v1/persistentvolumes/pv-2',
      ]),
    );

    await eventually('the cache', () => cacheOfDemo());
    sim.clearRequests();
    const cached = await finder.findForEntity(target);

    expect(cached).toEqual(live);
    expect(sim.requests()).toEqual([]);
  });

  it('has a scan that arrives while the cache is listing wait for it rather than read live again', async () => {
    // Volumes list slowly, so the cache is still syncing after the first scan.
    sim.addFault({
      verb: 'list',
      resource: 'persistentvolumes',
      latencyMs: 500,
    });
    const live = await finder.findForEntity(target);
    expect(cacheOfDemo()).toBeUndefined();
    sim.clearRequests();

    const waited = await finder.findForEntity(target);

    expect(waited).toEqual(live);
    expect(
      sim.requests().filter(r => r.path.startsWith('/api/v1/namespaces/')),
    ).toEqual([]);
  });

  it('answers from what the watches delivered since', async () => {
    await finder.findForEntity(target);
    await eventually('the cache', () => cacheOfDemo());
    sim.clearRequests();
    sim.store.create(
      'persistentvolumeclaims',
      pvc('data-db-5', {}, 'shop', { app: 'db' }),
    );
    const sts = structuredClone(
      sim.store.require('apps/statefulsets', 'shop', 'db'),
    );
    sts.spec.replicas = 2;
    sim.store.update('apps/statefulsets', sts);

    let names: string[] = [];
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      names = orphanNames(await finder.findForEntity(target));
      if (names.includes('data-db-5') && !names.includes('data-db-1')) break;
      await new Promise(r => setTimeout(r, 20));
    }
    expect(names).toEqual(['data-db-2', 'data-db-5']);

    // A volume's change reaches the report of an unchanged StatefulSet and namespace.
    const retainedOf = async () => {
      const scan = await finder.findForEntity(target);
      const section = scan.clusters[0];
      return section.ok
        ? section.statefulSets[0].orphans.find(o => o.name === 'data-db-2')
            ?.volume?.retained
        : undefined;
    };
    expect(await retainedOf()).toBe(true);
    const pv = structuredClone(
      sim.store.require('persistentvolumes', undefined, 'pv-2'),
    );
    pv.spec.persistentVolumeReclaimPolicy = 'Delete';
    sim.store.update('persistentvolumes', pv);
    const until2 = Date.now() + 5000;
    while ((await retainedOf()) && Date.now() < until2)
      await new Promise(r => setTimeout(r, 20));
    expect(await retainedOf()).toBe(false);
    expect(sim.requests().filter(r => r.verb === 'list')).toEqual([]);
  });

  it("finds an entity's StatefulSets in the cache by label as the labels change between scans", async () => {
    const byId = {
      entity: {} as Entity,
      entityRef: 'component:default/orders',
      labelSelector: 'backstage.io/kubernetes-id=orders',
    };
    const details = (await finder.clustersOf({}))[0];
    await finder.findForEntity(target);
    await eventually('the cache', () => cacheOfDemo());
    const namesOf = async () =>
      (await finder.scanCluster(details, [byId])).byEntity
        .get(byId.entityRef)!
        .map(s => s.name);
    const namesOnceDelivered = async (expected: string[]) => {
      const deadline = Date.now() + 5000;
      let names = await namesOf();
      while (names.join() !== expected.join() && Date.now() < deadline) {
        await new Promise(r => setTimeout(r, 20));
        names = await namesOf();
      }
      return names;
    };
    expect(await namesOf()).toEqual([]);
    const sts = structuredClone(
      sim.store.require('apps/statefulsets', 'shop', 'db'),
    );
    const labels = sts.metadata.labels;
    sts.metadata.labels = { ...labels, 'backstage.io/kubernetes-id': 'orders' };
    sim.store.update('apps/statefulsets', sts);
    try {
      expect(await namesOnceDelivered(['db'])).toEqual(['db']);
      const back = structuredClone(
        sim.store.require('apps/statefulsets', 'shop', 'db'),
      );
      back.metadata.labels = labels;
      sim.store.update('apps/statefulsets', back);
      expect(await namesOnceDelivered([])).toEqual([]);
    } finally {
      const now = structuredClone(
        sim.store.require('apps/statefulsets', 'shop', 'db'),
      );
      now.metadata.labels = labels;
      sim.store.update('apps/statefulsets', now);
    }
  });

  it('says how old its answer may be while a watch is disconnected, and which', async () => {
    await finder.findForEntity(target);
    await eventually(
      'the cache watching',
      () => cacheOfDemo() && !cacheOfDemo()!.staleness(),
    );
    const fresh = await finder.findForEntity(target);
    expect(fresh.clusters[0]).not.toHaveProperty('staleness');

    sim.addFault({ verb: 'watch', resource: 'persistentvolumes', status: 503 });
    sim.dropWatches();
    await new Promise(r => setTimeout(r, 1100));
    const stale = await finder.findForEntity(target);

    expect(stale.clusters[0]).toMatchObject({
      ok: true,
      staleness: { disconnectedWatches: ['persistentvolumes'] },
    });
    const { staleness } = stale.clusters[0] as any;
    expect(staleness.secondsSinceSync).toBeGreaterThanOrEqual(1);
    expect(orphanNames(stale)).toEqual(orphanNames(fresh));
  });
});

describe('OrphanFinder admitting what the caller may see', () => {
  it('hands admit each StatefulSet as its cluster has it (labels and all), shows what it admits with who else claims it, and only counts the rest', async () => {
    sim.store.create(
      'apps/statefulsets',
      statefulSet('ledger-db', { replicas: 0 }, 'shop', { app: 'db' }),
    );
    sim.store.create('persistentvolumeclaims', {
      ...pvc('data-ledger-db-0', {}, 'shop', { app: 'db' }),
      status: { phase: 'Bound', capacity: { storage: '1Gi' } },
    } as any);
    const admit = jest.fn(async (found: Array<{ statefulSet: any }>) =>
      found.map(({ statefulSet: sts }) =>
        sts.metadata.name === 'db'
          ? {
              claimants: ['component:default/db', 'component:default/twin'],
              refused: [],
              crowded: false,
              pruneNeeds: ['pvc-pruner.unowned.prune'],
            }
          : {
              claimants: ['component:default/db', 'component:default/ledger'],
              refused: ['component:default/ledger'],
              crowded: false,
              pruneNeeds: [],
            },
      ),
    );
    try {
      const scan = await finder.findForEntity(target, {}, admit);

      expect(admit).toHaveBeenCalledTimes(1);
      expect(
        admit.mock.calls[0][0].map(f => f.statefulSet.metadata.labels),
      ).toEqual([{ app: 'db' }, { app: 'db' }]);
      const [section] = scan.clusters;
      expect(section).toMatchObject({
        ok: true,
        withheld: {
          statefulSets: 1,
          refusedClaimants: ['component:default/ledger'],
        },
      });
      const shown = section.ok ? section.statefulSets : [];
      expect(shown.map(s => [s.name, s.sharedWith, s.pruneNeeds])).toEqual([
        ['db', ['component:default/twin'], ['pvc-pruner.unowned.prune']],
      ]);
      expect(JSON.stringify(scan)).not.toContain('ledger-db');
      expect(scan.totals.orphans).toBe(2);
    } finally {
      sim.store.delete('apps/statefulsets', 'shop', 'ledger-db', {});
      sim.store.delete(
        'persistentvolumeclaims',
        'shop',
        'data-ledger-db-0',
        {},
      );
    }
  });
});

describe('OrphanFinder and a misbehaving cluster', () => {
  it('shows that cluster as failed, naming the limit it went past, and still answers the others', async () => {
    const fake = await startFakeApiServer((_req, res) =>
      // Always the same continue token: without a limit, a list that never ends.
      res.end(JSON.stringify({ metadata: { continue: 'again' }, items: [] })),
    );
    try {
      const logger = mockServices.logger.mock();
      const finder2 = new OrphanFinder(
        new KubeGateways(
          ClusterRegistry.of(
            [
              {
                name: 'looping',
                url: fake.url,
                authMetadata: {
                  'kubernetes.io/auth-provider': 'localKubectlProxy',
                },
              },
              (await gateways.list())[0],
            ],
            logger,
          ),
          ClusterAuth.create({ config: new ConfigReader({}), logger }),
          5000,
        ),
      );

      const found = await finder2.findForEntity(target);

      expect(found.clusters[0]).toEqual({
        cluster: 'looping',
        ok: false,
        error: {
          name: 'ClusterRequestError',
          message:
            'cluster "looping" handed back a continue token it had already given (the list would never end) for list statefulsets: no real API server sends that, so pvc-pruner stopped reading (check what answers at that cluster’s URL)',
        },
      });
      expect(found.clusters[1]).toMatchObject({ cluster: 'demo', ok: true });
      expect(fake.requests).toHaveLength(2);
    } finally {
      await fake.close();
    }
  });
});

describe('OrphanFinder and the claims that will come back', () => {
  /** StatefulSet db at `replicas`, with the claims of ordinals 0–2 only (the tests above add one and scale it). */
  function resetDb(replicas: number) {
    const sts = structuredClone(
      sim.store.require('apps/statefulsets', 'shop', 'db'),
    );
    sts.spec.replicas = replicas;
    sim.store.update('apps/statefulsets', sts);
    const extra = sim.store.get('persistentvolumeclaims', 'shop', 'data-db-5');
    if (!extra) return;
    // No pvc-protection controller runs here: release its finalizer, then delete it.
    sim.store.update('persistentvolumeclaims', {
      ...extra,
      metadata: { ...extra.metadata, finalizers: [] },
    });
    sim.store.delete('persistentvolumeclaims', 'shop', 'data-db-5', {});
  }

  beforeAll(() => resetDb(1));

  it("reads each namespace's HorizontalPodAutoscalers with its claims and pods in a live scan, and keeps the claims inside an HPA's range", async () => {
    sim.store.create(
      HPAS,
      horizontalPodAutoscaler('db-hpa', 'db', { maxReplicas: 2 }, 'shop'),
    );

    const live = await finder.findForEntity(target);

    expect(orphanNames(live)).toEqual(['data-db-2']);
    expect(keptOf(live)).toEqual([
      ['data-db-1', 'autoscaler-range', { name: 'db-hpa', maxReplicas: 2 }],
    ]);
    expect(sim.requests().map(r => `${r.verb} ${r.path}`)).toContain(
      'list /apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers',
    );
  });

  it('keeps, never offers, the claims an autoscaler could bring back when the cluster refuses to list HPAs', async () => {
    sim.addFault({
      verb: 'list',
      resource: 'horizontalpodautoscalers',
      status: 403,
    });

    const live = await finder.findForEntity(target);

    expect(live.clusters[0].ok).toBe(true);
    expect(orphanNames(live)).toEqual([]);
    expect(keptOf(live)).toEqual([
      [
        'data-db-1',
        'autoscalers-unreadable',
        expect.stringMatching(
          /refused list horizontalpodautoscalers in shop: 403/,
        ),
      ],
      [
        'data-db-2',
        'autoscalers-unreadable',
        expect.stringMatching(
          /refused list horizontalpodautoscalers in shop: 403/,
        ),
      ],
    ]);

    // The cache is refused the HPAs too, and answers the same.
    await eventually('the cache', () => cacheOfDemo());
    const cached = await finder.findForEntity(target);
    expect(orphanNames(cached)).toEqual([]);
    expect(keptOf(cached).map(k => k[1])).toEqual([
      'autoscalers-unreadable',
      'autoscalers-unreadable',
    ]);
  });

  it("answers from the cache as the namespace's HPAs are created, raised and deleted, without a re-list", async () => {
    await finder.findForEntity(target);
    await eventually('the cache', () => cacheOfDemo());
    sim.clearRequests();
    expect(orphanNames(await finder.findForEntity(target))).toEqual([
      'data-db-1',
      'data-db-2',
    ]);

    sim.store.create(
      HPAS,
      horizontalPodAutoscaler('db-hpa', 'db', { maxReplicas: 2 }, 'shop'),
    );
    const created = await scanUntil(finder, s => orphanNames(s).length === 1);
    expect(orphanNames(created)).toEqual(['data-db-2']);
    expect(keptOf(created)).toEqual([
      ['data-db-1', 'autoscaler-range', { name: 'db-hpa', maxReplicas: 2 }],
    ]);

    const hpa = structuredClone(sim.store.require(HPAS, 'shop', 'db-hpa'));
    hpa.spec.maxReplicas = 3;
    sim.store.update(HPAS, hpa);
    const raised = await scanUntil(finder, s => orphanNames(s).length === 0);
    expect(keptOf(raised)).toEqual([
      ['data-db-1', 'autoscaler-range', { name: 'db-hpa', maxReplicas: 3 }],
      ['data-db-2', 'autoscaler-range', { name: 'db-hpa', maxReplicas: 3 }],
    ]);

    sim.store.delete(HPAS, 'shop', 'db-hpa');
    const deleted = await scanUntil(finder, s => orphanNames(s).length === 2);
    expect(keptOf(deleted)).toEqual([]);
    expect(sim.requests().filter(r => r.verb === 'list')).toEqual([]);
  });

  describe('a paused StatefulSet', () => {
    beforeAll(() => resetDb(0));

    afterAll(() => resetDb(1));

    it('keeps its claims by default, live and from the cache', async () => {
      const live = await finder.findForEntity(target);
      expect(orphanNames(live)).toEqual([]);
      // data-db-0 is still mounted by pod db-0 (no controller stops it here).
      expect(keptOf(live)).toEqual([
        ['data-db-0', 'mounted-by-pod', null],
        ['data-db-1', 'paused', null],
        ['data-db-2', 'paused', null],
      ]);
      await eventually('the cache', () => cacheOfDemo());
      expect(await finder.findForEntity(target)).toEqual(live);
    });

    it('offers them with pvcPruner.pausedStatefulSets: offer, live and from the cache', async () => {
      const offering = new OrphanFinder(gateways, caches, undefined, {
        pausedStatefulSets: 'offer',
      });
      const live = await offering.findForEntity(target);
      expect(orphanNames(live)).toEqual(['data-db-1', 'data-db-2']);
      await eventually('the cache', () => cacheOfDemo());
      expect(await offering.findForEntity(target)).toEqual(live);
    });
  });
});

/**
 * An API server holding one StatefulSet, `name` in namespace shop with the
 * label app=db (it answers every selector with it), and nothing else: a list of any other kind is empty, a watch stays open.
 */
function oneStatefulSetCluster(name: string) {
  return startFakeApiServer((_req, res, url) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (url.searchParams.get('watch')) {
      res.flushHeaders();
      return;
    }
    const items = url.pathname.endsWith('/statefulsets')
      ? [
          {
            metadata: {
              name,
              namespace: 'shop',
              uid: `uid-${name}`,
              labels: { app: 'db' },
            },
            spec: { replicas: 1, selector: {}, template: {} },
          },
        ]
      : [];
    res.end(JSON.stringify({ metadata: { resourceVersion: '1' }, items }));
  });
}

const statefulSetNames = (
  scan: Awaited<ReturnType<OrphanFinder['findForEntity']>>,
) =>
  scan.clusters.map(c => [c.cluster, c.ok && c.statefulSets.map(s => s.name)]);

describe('OrphanFinder and clusters of one name', () => {
  it("never shares one cluster's live scan with another of the same name", async () => {
    const [a, b] = await Promise.all([
      oneStatefulSetCluster('in-a'),
      oneStatefulSetCluster('in-b'),
    ]);
    try {
      const logger = mockServices.logger.mock();
      const details = (url: string) => ({
        name: 'twin',
        url,
        authMetadata: { 'kubernetes.io/auth-provider': 'localKubectlProxy' },
      });
      // Two locators giving one name (the registry warns): two clusters all the same.
      const twins = new OrphanFinder(
        new KubeGateways(
          ClusterRegistry.of([details(a.url), details(b.url)], logger),
          ClusterAuth.create({ config: new ConfigReader({}), logger }),
          5000,
        ),
      );

      expect(statefulSetNames(await twins.findForEntity(target))).toEqual([
        ['twin', ['in-a']],
        ['twin', ['in-b']],
      ]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('OrphanFinder and clusters the catalog locator found', () => {
  const cacheLists = (
    requests: Array<{ path: string; query: URLSearchParams }>,
  ) =>
    requests.filter(r => r.path === '/api/v1/pods' && !r.query.get('watch'))
      .length;

  it("starts a catalog cluster's cache for an entity's read, never for the fleet's", async () => {
    const fake = await oneStatefulSetCluster('db');
    try {
      const logger = mockServices.logger.mock();
      const config = new ConfigReader({
        kubernetes: {
          clusterLocatorMethods: [
            { type: 'catalog', dangerouslyAllowClusterUrls: ['127.0.0.1'] },
          ],
        },
      });
      const clusterAuth = ClusterAuth.create({ config, logger });
      const registry = ClusterRegistry.fromConfig({
        config,
        logger,
        auth: mockServices.auth(),
        clusterAuth,
        catalog: catalogServiceMock({
          entities: [
            {
              apiVersion: 'backstage.io/v1alpha1',
              kind: 'Resource',
              metadata: {
                name: 'from-catalog',
                annotations: {
                  'kubernetes.io/api-server': fake.url,
                  'kubernetes.io/api-server-certificate-authority': 'Q0E=',
                  'kubernetes.io/auth-provider': 'localKubectlProxy',
                },
              },
              spec: { type: 'kubernetes-cluster', owner: 'platform' },
            },
          ],
        }),
      });
      const catalogCaches = new ClusterCaches({
        trim: WATCH_CACHE_TRIMMERS,
        logger,
        syncWaitMs: 5000,
        timing: { minBackoffMs: 20, maxBackoffMs: 100, minWatchMs: 0 },
      });
      const catalogGateways = new KubeGateways(registry, clusterAuth, 5000);
      const catalogFinder = new OrphanFinder(catalogGateways, catalogCaches);
      try {
        const [cluster] = await catalogFinder.clustersOf({});
        expect(cluster.locatorType).toBe('catalog');

        const fleetScan = () =>
          catalogFinder
            .scanCluster(cluster, [target])
            .then(s => s.byEntity.get(target.entityRef)!.map(r => r.name));
        expect(await fleetScan()).toEqual(['db']);
        expect(await fleetScan()).toEqual(['db']);
        await new Promise(r => setTimeout(r, 100));
        expect(cacheLists(fake.requests)).toBe(0);

        await catalogFinder.findForEntity(target);
        await eventually('the cache listing', () => cacheLists(fake.requests));
        await eventually('the cache ready', () =>
          catalogCaches.ready(cluster, catalogGateways.forCluster(cluster), {
            start: false,
          }),
        );
        // Once it runs, the fleet reads from it too.
        const before = fake.requests.length;
        expect(await fleetScan()).toEqual(['db']);
        expect(fake.requests.length).toBe(before);
      } finally {
        await catalogCaches.stop();
      }
    } finally {
      await fake.close();
    }
  });
});

describe("OrphanFinder and a user's tokens", () => {
  it('sends them only to the clusters a read reads: the one an entity names, the one a fleet scan is for', async () => {
    const [a, b] = await Promise.all([
      oneStatefulSetCluster('in-a'),
      oneStatefulSetCluster('in-b'),
    ]);
    try {
      const logger = mockServices.logger.mock();
      const google = (name: string, url: string) => ({
        name,
        url,
        authMetadata: { 'kubernetes.io/auth-provider': 'google' },
      });
      const userFinder = new OrphanFinder(
        new KubeGateways(
          ClusterRegistry.of([google('a', a.url), google('b', b.url)], logger),
          ClusterAuth.create({ config: new ConfigReader({}), logger }),
          5000,
        ),
      );
      const tokens = { google: 'the-user-token' };

      const found = await userFinder.findForEntity(
        { ...target, cluster: 'a' },
        tokens,
      );
      expect(statefulSetNames(found)).toEqual([['a', ['in-a']]]);
      expect(a.requests.map(r => r.authorization)).toEqual(
        a.requests.map(() => 'Bearer the-user-token'),
      );
      expect(b.requests).toEqual([]);

      const readOfA = a.requests.length;
      const [, clusterB] = await userFinder.clustersOf({});
      await userFinder.scanCluster(clusterB, [target], { requestAuth: tokens });
      expect(b.requests.length).toBeGreaterThan(0);
      expect(a.requests).toHaveLength(readOfA);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('OrphanFinder telling the card what a prune with snapshots would do', () => {
  it('from a synced cache, lists the VolumeSnapshotClasses once per answer and gives every claim its plan: the driver’s default class, or none needed for a Retain volume', async () => {
    const planning = new OrphanFinder(
      gateways,
      caches,
      undefined,
      undefined,
      new OrphanSnapshotPlanner({
        enabled: true,
        retentionDays: 7,
        required: true,
        classByStorageClass: new Map(),
      }),
    );
    // An earlier test turns pv-2 to Delete.
    const pv = structuredClone(
      sim.store.require('persistentvolumes', undefined, 'pv-2'),
    );
    pv.spec.persistentVolumeReclaimPolicy = 'Retain';
    sim.store.update('persistentvolumes', pv);
    sim.store.create('snapshot.storage.k8s.io/volumesnapshotclasses', {
      metadata: {
        name: 'fast-snapshots',
        annotations: {
          'snapshot.storage.kubernetes.io/is-default-class': 'true',
        },
      },
      driver: 'sim.csi.k8s.io',
      deletionPolicy: 'Delete',
    } as any);
    await planning.findForEntity(target);
    await eventually('the cache', () => cacheOfDemo());
    sim.clearRequests();

    const scan = await planning.findForEntity(target);

    expect(scan.snapshots).toEqual({
      enabled: true,
      retentionDays: 7,
      required: true,
    });
    const orphans = scan.clusters.flatMap(c =>
      c.ok ? c.statefulSets.flatMap(s => s.orphans) : [],
    );
    expect(
      orphans.map(o => [o.name, o.volume?.csiDriver, o.snapshotPlan]),
    ).toEqual([
      [
        'data-db-1',
        'sim.csi.k8s.io',
        { kind: 'class', volumeSnapshotClass: 'fast-snapshots' },
      ],
      [
        'data-db-2',
        'sim.csi.k8s.io',
        {
          kind: 'not-needed',
          reason: expect.stringContaining('reclaim policy Retain'),
        },
      ],
    ]);
    // The only request: one list of the classes, none per claim.
    expect(sim.requests().map(r => r.path)).toEqual([
      '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses',
    ]);
  });

  it('without a planner, says nothing of snapshots', async () => {
    const scan = await finder.findForEntity(target);
    expect(scan.snapshots).toBeUndefined();
    expect(
      scan.clusters.flatMap(c =>
        c.ok ? c.statefulSets.flatMap(s => s.orphans) : [],
      )[0].snapshotPlan,
    ).toBeUndefined();
  });
});

describe('OrphanFinder and a claim that comes back into use', () => {
  const T1 = new Date('2026-11-01T00:00:00.000Z');
  const T3 = new Date('2026-11-20T00:00:00.000Z');
  let close: () => Promise<void>;

  function scaleDb(replicas: number) {
    const sts = structuredClone(
      sim.store.require('apps/statefulsets', 'shop', 'db'),
    );
    sts.spec.replicas = replicas;
    sim.store.update('apps/statefulsets', sts);
  }

  afterEach(async () => {
    scaleDb(1);
    if (sim.store.get('pods', 'shop', 'debug'))
      sim.store.delete('pods', 'shop', 'debug', {});
    const extra = sim.store.get('persistentvolumeclaims', 'shop', 'data-db-3');
    if (extra) {
      sim.store.update('persistentvolumeclaims', {
        ...extra,
        metadata: { ...extra.metadata, finalizers: [] },
      });
      sim.store.delete('persistentvolumeclaims', 'shop', 'data-db-3', {});
    }
    await close();
  });

  it('starts its first sighting over when it is orphaned again, whether a running ordinal or a pod used it, and keeps that of a claim orphaned throughout', async () => {
    const memory = memoryDatabase();
    close = memory.close;
    let clock = T1;
    const sightings = await OrphanSightingStore.create({
      database: memory.database,
      now: () => clock,
    });
    const scanner = new OrphanFinder(
      gateways,
      undefined,
      new OrphanAnnotator(sightings),
    );
    scaleDb(1);
    sim.store.create('persistentvolumeclaims', {
      ...pvc('data-db-3', {}, 'shop', { app: 'db' }),
      status: { phase: 'Pending' },
    } as any);
    const firstSeen = async () =>
      Object.fromEntries(
        (await scanner.findForEntity(target)).clusters.flatMap(c =>
          c.ok
            ? c.statefulSets.flatMap(s =>
                s.orphans.map(o => [o.name, o.firstSeenOrphanedAt]),
              )
            : [],
        ),
      );

    expect(await firstSeen()).toEqual({
      'data-db-1': T1.toISOString(),
      'data-db-2': T1.toISOString(),
      'data-db-3': T1.toISOString(),
    });

    // Back in use: ordinal 1 runs again, and a pod mounts data-db-2.
    clock = new Date('2026-11-10T00:00:00.000Z');
    scaleDb(2);
    sim.store.create(
      'pods',
      manifest({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'debug', namespace: 'shop' },
        spec: {
          containers: [{ name: 'sh', image: 'busybox' }],
          volumes: [
            { name: 'd', persistentVolumeClaim: { claimName: 'data-db-2' } },
          ],
        },
      }),
    );
    expect(await firstSeen()).toEqual({ 'data-db-3': T1.toISOString() });

    // Orphaned again.
    clock = T3;
    scaleDb(1);
    sim.store.delete('pods', 'shop', 'debug', {});
    expect(await firstSeen()).toEqual({
      'data-db-1': T3.toISOString(),
      'data-db-2': T3.toISOString(),
      'data-db-3': T1.toISOString(),
    });
  });
});
