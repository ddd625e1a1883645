import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import type { ClusterDetails } from '@backstage/plugin-kubernetes-node';
import { eventually } from '../../__testUtils__/eventually';
import { startFakeApiServer } from '../../__testUtils__/fakeApiServer';
import { WATCH_CACHE_TRIMMERS } from '../../orphans';
import { ClusterAuth } from '../auth';
import { ClusterRegistry } from '../ClusterRegistry';
import { KubeGateways } from '../KubeGateways';
import { ClusterCaches } from './ClusterCaches';

/** An API server with nothing in it: empty lists, and watches that stay open. */
const emptyCluster = () =>
  startFakeApiServer((_req, res, url) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (url.searchParams.get('watch')) res.flushHeaders();
    else
      res.end(
        JSON.stringify({ metadata: { resourceVersion: '1' }, items: [] }),
      );
  });

let servers: Array<Awaited<ReturnType<typeof emptyCluster>>> = [];
let caches: ClusterCaches;

beforeEach(() => {
  caches = new ClusterCaches({
    trim: WATCH_CACHE_TRIMMERS,
    logger: mockServices.logger.mock(),
    syncWaitMs: 2000,
    timing: { minBackoffMs: 20, maxBackoffMs: 100, minWatchMs: 0 },
  });
});

afterEach(async () => {
  await caches.stop();
  await Promise.all(servers.map(s => s.close()));
  servers = [];
});

/** Clusters that a test can change, as a locator's refresh would, with their gateways. */
async function located(...urls: string[]) {
  const logger = mockServices.logger.mock();
  const details: ClusterDetails[] = urls.map((url, i) => ({
    name: `cluster-${i}`,
    url,
    authMetadata: { 'kubernetes.io/auth-provider': 'localKubectlProxy' },
  }));
  const gateways = new KubeGateways(
    ClusterRegistry.of(details, logger),
    ClusterAuth.create({ config: new ConfigReader({}), logger }),
    2000,
  );
  /** The cluster as now located, with its shared gateway. */
  const now = async (i = 0) => {
    const cluster = (await gateways.list())[i];
    return { cluster, gateway: gateways.forCluster(cluster) };
  };
  return { details, gateways, now };
}

async function startServers(n: number) {
  servers = await Promise.all(Array.from({ length: n }, emptyCluster));
  return servers;
}

const watchesOpen = (server: (typeof servers)[number]) =>
  server.requests.filter(r => r.query.get('watch') && !r.closedEarly).length;

describe('ClusterCaches', () => {
  it('gives a cluster whose URL changed a new cache, and stops the old one: the old URL is not followed', async () => {
    const [a, b] = await startServers(2);
    const { details, now } = await located(a.url);
    const first = await now();
    caches.ready(first.cluster, first.gateway);
    const old = await eventually('the cache for the first URL', () =>
      caches.ready(first.cluster, first.gateway),
    );
    await eventually(
      'its five watches (StatefulSets, claims, pods, volumes, HPAs)',
      () => watchesOpen(a) === 5,
    );

    details[0] = { ...details[0], url: b.url };
    const moved = await now();
    caches.ready(moved.cluster, moved.gateway);
    const fresh = await eventually('the cache for the new URL', () =>
      caches.ready(moved.cluster, moved.gateway),
    );

    expect(fresh).not.toBe(old);
    await eventually(
      'the old URL no longer watched',
      () => watchesOpen(a) === 0,
    );
    // A cache is ready once its lists are in; its watches open just after.
    await eventually('five watches of the new URL', () => watchesOpen(b) === 5);
    // The cluster as it was is not answered from anything any more.
    expect(caches.ready(first.cluster, first.gateway, { start: false })).toBe(
      undefined,
    );
  });

  it('starts no cache for a read that may not start one, but gives it one already running', async () => {
    const [a] = await startServers(1);
    const { now } = await located(a.url);
    const { cluster, gateway } = await now();

    expect(caches.ready(cluster, gateway, { start: false })).toBeUndefined();
    await expect(
      caches.whenReady(cluster, gateway, { start: false }),
    ).resolves.toBeUndefined();
    await new Promise(r => setTimeout(r, 100));
    expect(a.requests).toEqual([]);

    caches.ready(cluster, gateway);
    const running = await eventually('the cache', () =>
      caches.ready(cluster, gateway),
    );
    expect(caches.ready(cluster, gateway, { start: false })).toBe(running);
  });

  it('stops the cache of a cluster no longer located (its Resource removed from the catalog)', async () => {
    const [a, b] = await startServers(2);
    const { details, gateways, now } = await located(a.url, b.url);
    for (const i of [0, 1]) {
      const { cluster, gateway } = await now(i);
      caches.ready(cluster, gateway);
    }
    await eventually(
      'both followed',
      () => watchesOpen(a) === 5 && watchesOpen(b) === 5,
    );

    details.splice(0, 1);
    caches.retain(await gateways.list());

    await eventually('the removed one let go', () => watchesOpen(a) === 0);
    expect(watchesOpen(b)).toBe(5);
  });
});
