import { ServerResponse } from 'node:http';
import { mockServices } from '@backstage/backend-test-utils';
import {
  horizontalPodAutoscaler,
  KubeSim,
  manifest,
  pvc,
  statefulSet,
} from 'kube-sim';
import { eventually } from '../../__testUtils__/eventually';
import {
  FakeApiRequest,
  startFakeApiServer,
} from '../../__testUtils__/fakeApiServer';
import {
  connectionTo,
  startShopSimulator,
} from '../../__testUtils__/shopSimulator';
import { podAsTheRuleReadsIt, WATCH_CACHE_TRIMMERS } from '../../orphans';
import { ClusterConnection } from '../ClusterConnection';
import { KubeGateway } from '../KubeGateway';
import { ClusterCache } from './ClusterCache';

jest.setTimeout(20000);

const FAST = { minBackoffMs: 20, maxBackoffMs: 100, minWatchMs: 0 };

let sim: KubeSim;
let connection: ClusterConnection;
let cache: ClusterCache | undefined;

function startCache(
  to = connection,
  gateway = new KubeGateway('demo', to, 5000),
  logger = mockServices.logger.mock(),
) {
  cache = new ClusterCache(gateway, WATCH_CACHE_TRIMMERS, FAST, logger);
  cache.start();
  return cache;
}

/** Answers a watch and sends nothing (yet). */
const openWatch = (res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.flushHeaders();
};

const listsOf = (requests: FakeApiRequest[], path: string) =>
  requests.filter(r => r.path === path && !r.query.get('watch')).length;

const requestsFor = (resource: string, verb: string) =>
  sim.requests().filter(r => r.resource === resource && r.verb === verb);

const pod = (name: string, claimName: string) =>
  manifest({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'shop',
      labels: { app: 'db' },
      annotations: { note: 'x'.repeat(1000) },
    },
    spec: {
      nodeName: 'node-1',
      containers: [
        { name: 'db', image: 'db:1', env: [{ name: 'A', value: 'b' }] },
      ],
      volumes: [
        { name: 'data', persistentVolumeClaim: { claimName } },
        { name: 'scratch', emptyDir: {} },
      ],
    },
  });

beforeAll(async () => {
  ({ sim, connection } = await startShopSimulator({ bookmarkIntervalMs: 50 }));
  sim.store.create(
    'apps/statefulsets',
    statefulSet('db', { replicas: 1 }, 'shop', { app: 'db' }),
  );
  sim.store.create('persistentvolumeclaims', pvc('data-db-0', {}, 'shop'));
  sim.store.create('pods', pod('db-0', 'data-db-0'));
});

afterAll(async () => {
  await sim.close();
});

afterEach(async () => {
  await cache?.stop();
  cache = undefined;
  sim.clearFaults();
  sim.clearRequests();
});

describe('ClusterCache', () => {
  it('lists each kind cluster-wide, then follows it by a watch with bookmarks from the list version', async () => {
    const c = startCache();
    await eventually('synced', () => c.ready);
    const claimList = requestsFor('persistentvolumeclaims', 'list');
    expect(claimList.map(r => r.path)).toEqual([
      '/api/v1/persistentvolumeclaims',
    ]);
    await eventually(
      'watching claims',
      () => requestsFor('persistentvolumeclaims', 'watch').length,
    );
    const watch = new URLSearchParams(
      requestsFor('persistentvolumeclaims', 'watch')[0].query,
    );
    expect(watch.get('allowWatchBookmarks')).toBe('true');
    expect(Number(watch.get('resourceVersion'))).toBeGreaterThan(0);

    sim.store.create('persistentvolumeclaims', pvc('data-db-1', {}, 'shop'));
    await eventually('the new claim', () => c.claims.get('shop', 'data-db-1'));
    sim.store.create('apps/statefulsets', statefulSet('web', {}, 'shop'));
    await eventually('the new StatefulSet', () =>
      c.statefulSets.get('shop', 'web'),
    );
    sim.store.delete('apps/statefulsets', 'shop', 'web');
    await eventually(
      'the StatefulSet gone',
      () => !c.statefulSets.get('shop', 'web'),
    );
    expect(requestsFor('persistentvolumeclaims', 'list')).toHaveLength(1);
  });

  it('keeps objects trimmed to what the orphan rule reads, and pods indexed by the claims they mount', async () => {
    const c = startCache();
    await eventually('synced', () => c.ready);

    const cached = c.pods.get('shop', 'db-0')!;
    expect(cached).toEqual(
      podAsTheRuleReadsIt(sim.store.get('pods', 'shop', 'db-0') as any),
    );
    expect(JSON.stringify(cached)).not.toContain('annotations');
    expect(cached.spec?.volumes).toHaveLength(1);
    expect(
      c.pods
        .indexed('shop')
        .get('data-db-0')
        ?.map(p => p.metadata?.name),
    ).toEqual(['db-0']);
    expect(c.statefulSets.get('shop', 'db')?.spec?.template).toEqual({});

    sim.store.delete('pods', 'shop', 'db-0', { gracePeriodSeconds: 0 });
    await eventually(
      'the pod gone from the index',
      () => !c.pods.indexed('shop').has('data-db-0'),
    );
    sim.store.create('pods', pod('db-0', 'data-db-0'));
    await eventually('the pod back', () =>
      c.pods.indexed('shop').has('data-db-0'),
    );
  });

  it('resumes after a bookmark without a re-list, even once older history is compacted', async () => {
    const c = startCache();
    await eventually('synced', () => c.ready);
    // Changes no cached kind sees: only a bookmark carries the claims watch past them.
    sim.store.create(
      'namespaces',
      manifest({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'elsewhere' },
      }),
    );
    const version = sim.store.resourceVersion;
    await new Promise(r => setTimeout(r, 200));
    sim.compact();
    sim.dropWatches();

    await eventually('watching again', () =>
      requestsFor('persistentvolumeclaims', 'watch').find(
        r => new URLSearchParams(r.query).get('resourceVersion') === version,
      ),
    );
    expect(requestsFor('persistentvolumeclaims', 'list')).toHaveLength(1);
  });

  it('re-lists when its version is too old (the ERROR 410 event), and picks up what changed meanwhile', async () => {
    const c = startCache();
    await eventually('synced', () => c.ready);
    await eventually('watching', () => c.staleness() === undefined);
    sim.pauseControllers();
    // In one tick: a change, history forgotten, watches dropped; the re-watch gets an ERROR 410 event.
    sim.store.create(
      'namespaces',
      manifest({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'compacted' },
      }),
    );
    sim.compact();
    sim.dropWatches();
    sim.store.create('persistentvolumeclaims', pvc('data-db-7', {}, 'shop'));

    await eventually(
      'the re-list',
      () => requestsFor('persistentvolumeclaims', 'list').length === 2,
    );
    await eventually('the claim made while disconnected', () =>
      c.claims.get('shop', 'data-db-7'),
    );
    sim.store.delete('persistentvolumeclaims', 'shop', 'data-db-7');
  });

  const EXPIRED = {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code: 410,
    reason: 'Expired',
    message: 'too old resource version: 5 (9)',
  };

  it.each([
    ['an ERROR event carrying a 410 Status, as kube-apiserver sends', 200],
    ['an HTTP 410 answer to the watch request itself', 410],
  ])('re-lists on %s for an expired version', async (_how, status) => {
    let watches = 0;
    const fake = await startFakeApiServer((_req, res, url) => {
      if (!url.searchParams.get('watch')) {
        res.end(
          JSON.stringify({ metadata: { resourceVersion: '5' }, items: [] }),
        );
        return;
      }
      watches++;
      const expire =
        url.pathname === '/api/v1/persistentvolumeclaims' && watches < 8;
      if (expire && status === 410) {
        res.writeHead(410, { 'content-type': 'application/json' });
        res.end(JSON.stringify(EXPIRED));
        return;
      }
      openWatch(res);
      if (expire)
        res.end(`${JSON.stringify({ type: 'ERROR', object: EXPIRED })}\n`);
    });
    try {
      const c = startCache(fake.connection);
      await eventually(
        'a re-list after the expiry',
        () => listsOf(fake.requests, '/api/v1/persistentvolumeclaims') >= 2,
      );
      expect(c.ready).toBe(true);
      await c.stop();
    } finally {
      await fake.close();
    }
  });

  describe('a cluster that sends more than any real one', () => {
    const emptyList = JSON.stringify({
      metadata: { resourceVersion: '5' },
      items: [],
    });
    const fakePod = (name: string) => ({
      metadata: { name, namespace: 'shop', resourceVersion: '6' },
    });

    it('fails its list on the limit, and is retried like any failed list', async () => {
      let token = 0;
      const fake = await startFakeApiServer((_req, res, url) => {
        if (url.searchParams.get('watch')) {
          openWatch(res);
          return;
        }
        if (url.pathname !== '/api/v1/persistentvolumeclaims') {
          res.end(emptyList);
          return;
        }
        res.end(
          JSON.stringify({
            metadata: { resourceVersion: '5', continue: `t${++token}` },
            items: [],
          }),
        );
      });
      try {
        const c = startCache(
          fake.connection,
          new KubeGateway('fake', fake.connection, 5000, {
            limits: { listPages: 5 },
          }),
        );
        await eventually(
          'the claims listed again after the limit stopped the first list',
          () => listsOf(fake.requests, '/api/v1/persistentvolumeclaims') > 5,
        );
        expect(c.ready).toBe(false);
        await c.stop();
      } finally {
        await fake.close();
      }
    });

    it('holds no more objects of a kind than one list may, however many its watch adds', async () => {
      const fake = await startFakeApiServer((_req, res, url) => {
        if (url.pathname !== '/api/v1/pods') {
          if (url.searchParams.get('watch')) openWatch(res);
          else res.end(emptyList);
          return;
        }
        if (!url.searchParams.get('watch')) {
          res.end(
            JSON.stringify({
              metadata: { resourceVersion: '5' },
              items: [fakePod('a'), fakePod('b')],
            }),
          );
          return;
        }
        openWatch(res);
        let n = 0;
        const flood = () => {
          if (res.destroyed) return;
          res.write(
            `${JSON.stringify({
              type: 'ADDED',
              object: fakePod(`new-${n++}`),
            })}\n`,
          );
          setImmediate(flood);
        };
        flood();
      });
      try {
        const c = startCache(
          fake.connection,
          new KubeGateway('fake', fake.connection, 5000, {
            limits: { listItems: 10 },
          }),
        );
        await eventually(
          'the pods re-listed after the watch went past the limit',
          () => listsOf(fake.requests, '/api/v1/pods') >= 2,
        );
        expect(c.pods.size).toBeLessThanOrEqual(10);
        await c.stop();
      } finally {
        await fake.close();
      }
    });
  });

  it('reports how long ago it last followed the cluster while a watch is down, and which', async () => {
    const c = startCache();
    await eventually('synced', () => c.ready);
    await eventually('watching', () => c.staleness() === undefined);
    sim.addFault({
      verb: 'watch',
      resource: 'persistentvolumeclaims',
      status: 503,
    });
    const droppedAt = Date.now();
    sim.dropWatches();

    // Every watch was dropped; all but the claims' reconnect.
    const staleness = await eventually('only the claims disconnected', () => {
      const s = c.staleness(droppedAt + 7000);
      return s?.disconnectedWatches.length === 1 && s;
    });
    expect(staleness.disconnectedWatches).toEqual(['persistentvolumeclaims']);
    expect(staleness.secondsSinceSync).toBeGreaterThanOrEqual(6);
    expect(staleness.secondsSinceSync).toBeLessThanOrEqual(7);
    expect(c.ready).toBe(true);

    sim.clearFaults();
    await eventually('reconnected', () => c.staleness() === undefined);
  });

  it('turns itself off when the service account may not list or watch cluster-wide', async () => {
    const token = sim.addToken({
      user: 'namespaced',
      rules: [
        {
          apiGroups: ['', 'apps'],
          resources: ['*'],
          verbs: ['get', 'list', 'watch'],
        },
      ],
      namespaces: ['shop'],
    });
    const c = startCache(connectionTo(sim, token));
    await eventually(
      'every kind refused',
      () =>
        requestsFor('persistentvolumes', 'list').some(r => r.status === 403) &&
        requestsFor('pods', 'list').some(r => r.status === 403),
    );
    await new Promise(r => setTimeout(r, 100));
    expect(c.ready).toBe(false);
    // Refused once, not retried.
    expect(requestsFor('pods', 'list')).toHaveLength(1);
  });

  it('lists and watches HorizontalPodAutoscalers cluster-wide too, trimmed, and answers them by namespace', async () => {
    const hpas = 'autoscaling/horizontalpodautoscalers';
    sim.store.create(
      hpas,
      horizontalPodAutoscaler('db-hpa', 'db', { maxReplicas: 4 }, 'shop'),
    );
    const c = startCache();
    await eventually('synced', () => c.ready);
    expect(
      requestsFor('horizontalpodautoscalers', 'list').map(r => r.path),
    ).toEqual(['/apis/autoscaling/v2/horizontalpodautoscalers']);
    const listed = c.autoscalersIn('shop');
    expect(listed).toEqual([
      {
        metadata: expect.objectContaining({ name: 'db-hpa' }),
        spec: {
          scaleTargetRef: {
            apiVersion: 'apps/v1',
            kind: 'StatefulSet',
            name: 'db',
          },
          minReplicas: 1,
          maxReplicas: 4,
        },
      },
    ]);
    expect(c.autoscalersIn('elsewhere')).toEqual([]);

    const before = c.autoscalersGeneration('shop');
    const hpa = structuredClone(sim.store.require(hpas, 'shop', 'db-hpa'));
    hpa.spec.maxReplicas = 9;
    sim.store.update(hpas, hpa);
    await eventually(
      'the raise',
      () => (c.autoscalersIn('shop') as any)[0]?.spec.maxReplicas === 9,
    );
    expect(c.autoscalersGeneration('shop')).not.toBe(before);
    sim.store.delete(hpas, 'shop', 'db-hpa');
    await eventually(
      'the HPA gone',
      () => (c.autoscalersIn('shop') as unknown[]).length === 0,
    );
  });

  it('stays on when only HorizontalPodAutoscalers are refused (an RBAC binding from before it read them), and says why they are unknown', async () => {
    const token = sim.addToken({
      user: 'older-binding',
      rules: [
        {
          apiGroups: ['', 'apps'],
          resources: ['*'],
          verbs: ['get', 'list', 'watch'],
        },
      ],
    });
    const logger = mockServices.logger.mock();
    const c = startCache(connectionTo(sim, token), undefined, logger);
    expect(await c.untilReady(5000)).toBe(true);
    expect(c.autoscalersIn('shop')).toEqual({
      unreadable: expect.stringMatching(
        /^cluster "demo" refused list \/apis\/autoscaling\/v2\/horizontalpodautoscalers: 403/,
      ),
    });
    expect(c.autoscalersGeneration('shop')).toBe(-1);
    // Not behind for the refused kind: following the others is being in step.
    await eventually('watching', () => c.staleness() === undefined);
    expect(logger.warn).toHaveBeenCalledWith(
      expect.stringMatching(
        /^pvc-pruner: the watch cache of cluster "demo" answers without horizontalpodautoscalers because .*403.*; every claim an autoscaler could bring back is kept, not offered\. Grant list and watch on horizontalpodautoscalers cluster-wide/,
      ),
    );
  });

  it('is not ready before the HorizontalPodAutoscalers are listed: an empty list is no answer', async () => {
    sim.addFault({
      verb: 'list',
      resource: 'horizontalpodautoscalers',
      latencyMs: 400,
    });
    const c = startCache();
    await eventually(
      'every other kind listed',
      () => requestsFor('persistentvolumes', 'list').length > 0,
    );
    await new Promise(r => setTimeout(r, 150));
    expect(c.ready).toBe(false);
    await eventually('synced', () => c.ready);
  });

  it('stop ends every watch and retry timer', async () => {
    const c = startCache();
    await eventually('synced', () => c.ready);
    await eventually('watching', () => c.staleness() === undefined);
    sim.addFault({ verb: 'watch', resource: 'pods', status: 503 });
    sim.dropWatches();
    await eventually('retrying pods', () =>
      requestsFor('pods', 'watch').some(r => r.status === 503),
    );

    await c.stop();
    cache = undefined;
    sim.clearRequests();
    // Long enough for closed sockets to reach the server, and for several retries had the timer survived.
    await new Promise(r => setTimeout(r, 300));
    expect(sim.dropWatches()).toBe(0);
    expect(sim.requests()).toEqual([]);
  });
});
