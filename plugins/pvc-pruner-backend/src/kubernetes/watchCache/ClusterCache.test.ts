import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { mockServices } from '@backstage/backend-test-utils';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeSim, manifest, pvc, statefulSet } from 'kube-sim';
import { eventually } from '../../__testUtils__/eventually';
import { startShopSimulator } from '../../__testUtils__/shopSimulator';
import { podAsTheRuleReadsIt, WATCH_CACHE_TRIMMERS } from '../../orphans';
import { KubeGateway } from '../KubeGateway';
import { ClusterCache } from './ClusterCache';

jest.setTimeout(20000);

const FAST = { minBackoffMs: 20, maxBackoffMs: 100, minWatchMs: 0 };

let sim: KubeSim;
let kubeConfig: KubeConfig;
let cache: ClusterCache | undefined;

function startCache(
  kc = kubeConfig,
  gateway = new KubeGateway('demo', kc, 5000),
) {
  cache = new ClusterCache(
    gateway,
    WATCH_CACHE_TRIMMERS,
    FAST,
    mockServices.logger.mock(),
  );
  cache.start();
  return cache;
}

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
  ({ sim, kubeConfig } = await startShopSimulator({ bookmarkIntervalMs: 50 }));
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

  it('re-lists when its version is too old (410), and picks up what changed meanwhile', async () => {
    const c = startCache();
    await eventually('synced', () => c.ready);
    await eventually('watching', () => c.staleness() === undefined);
    sim.pauseControllers();
    // In one tick: a change, history forgotten, watches dropped; the re-watch gets 410.
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
    expect(
      requestsFor('persistentvolumeclaims', 'watch').map(r => r.status),
    ).toContain(410);
    await eventually('the claim made while disconnected', () =>
      c.claims.get('shop', 'data-db-7'),
    );
    sim.store.delete('persistentvolumeclaims', 'shop', 'data-db-7');
  });

  it('re-lists on an ERROR event carrying a 410 Status, as kube-apiserver sends for an expired version', async () => {
    const served: string[] = [];
    let watches = 0;
    const server: Server = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      served.push(
        `${url.searchParams.get('watch') ? 'watch' : 'list'} ${url.pathname}`,
      );
      if (!url.searchParams.get('watch')) {
        res.end(
          JSON.stringify({ metadata: { resourceVersion: '5' }, items: [] }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      watches++;
      if (url.pathname === '/api/v1/persistentvolumeclaims' && watches < 8) {
        res.end(
          `${JSON.stringify({
            type: 'ERROR',
            object: {
              kind: 'Status',
              apiVersion: 'v1',
              status: 'Failure',
              code: 410,
              reason: 'Expired',
              message: 'too old resource version: 5 (9)',
            },
          })}\n`,
        );
      }
    });
    await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
    try {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [
          {
            name: 'fake',
            server: `http://127.0.0.1:${
              (server.address() as AddressInfo).port
            }`,
            skipTLSVerify: true,
          },
        ],
        users: [{ name: 'u', token: 't' }],
        contexts: [{ name: 'fake', cluster: 'fake', user: 'u' }],
        currentContext: 'fake',
      });
      const c = startCache(kc);
      await eventually(
        'a re-list after the ERROR event',
        () =>
          served.filter(s => s === 'list /api/v1/persistentvolumeclaims')
            .length >= 2,
      );
      expect(c.ready).toBe(true);
      await c.stop();
    } finally {
      server.closeAllConnections();
      await new Promise(r => server.close(r));
    }
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
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfigFor(token));
    const c = startCache(kc);
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
