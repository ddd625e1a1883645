import type { KubeSim } from 'kube-sim';
import {
  ORDERS_DB_ORPHANS,
  pruneAll,
  Pruner,
  sleep,
  startPruner,
  startSim,
  statefulSetIn,
  waitFor,
} from './__testUtils__/harness';

jest.setTimeout(30000);

const CACHED = [
  '/apis/apps/v1/statefulsets',
  '/api/v1/persistentvolumeclaims',
  '/api/v1/pods',
  '/api/v1/persistentvolumes',
];

/** Until the plugin's watch cache watches every kind it holds. */
const cacheWatching = (sim: KubeSim) =>
  waitFor('the watch cache to watch every kind', () =>
    CACHED.every(path =>
      sim
        .requests()
        .some(r => r.verb === 'watch' && r.path === path && r.status === 200),
    ),
  );

describe('the shared watch cache, with the real plugin over HTTP', () => {
  let sim: KubeSim;
  let pruner: Pruner | undefined;

  beforeEach(async () => {
    sim = await startSim();
    pruner = await startPruner({ sim });
  });

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  it('answers card scans from a warm cache without a single request to the API server', async () => {
    const live = await pruner!.scan();
    await cacheWatching(sim);
    sim.clearRequests();

    const scans = [];
    for (let i = 0; i < 3; i++) scans.push(await pruner!.scan());

    expect(sim.requests()).toEqual([]);
    for (const scan of scans) expect(scan).toEqual(live);
    expect(
      statefulSetIn(scans[0], 'shop', 'orders-db')
        .orphans.map(o => o.name)
        .sort(),
    ).toEqual(ORDERS_DB_ORPHANS);
  });

  it('answers the fleet from a warm cache as it answered live, without a request to the API server', async () => {
    const live = await pruner!.get('/v1/fleet');
    expect(live.status).toBe(200);
    await cacheWatching(sim);
    sim.clearRequests();

    const warm = await pruner!.get('/v1/fleet');

    expect(sim.requests()).toEqual([]);
    expect(warm.body).toEqual(live.body);
    expect(warm.body.items[0].statefulSets[0]).toMatchObject({
      name: 'orders-db',
      orphans: ORDERS_DB_ORPHANS.length,
    });
    expect(
      warm.body.unowned.statefulSets.map((s: { name: string }) => s.name),
    ).toEqual(['ledger-db', 'nightly-reports', 'search-index']);
  });

  it('still re-checks every claim live before deleting it, however warm the cache', async () => {
    await pruner!.scan();
    await cacheWatching(sim);
    const sts = statefulSetIn(await pruner!.scan(), 'shop', 'orders-db');
    sim.clearRequests();

    const job = await pruner!.waitForJob(await pruner!.prune(pruneAll(sts)));

    expect(job.status).toBe('succeeded');
    const log = sim.requests();
    for (const name of ORDERS_DB_ORPHANS) {
      const claimPath = `/api/v1/namespaces/shop/persistentvolumeclaims/${name}`;
      const deleted = log.findIndex(
        r => r.method === 'DELETE' && r.path === claimPath,
      );
      expect(deleted).toBeGreaterThan(0);
      expect(
        log
          .slice(0, deleted)
          .some(r => r.verb === 'get' && r.path === claimPath),
      ).toBe(true);
      expect(
        log
          .slice(0, deleted)
          .some(
            r => r.verb === 'list' && r.path === '/api/v1/namespaces/shop/pods',
          ),
      ).toBe(true);
    }
    // And the cache follows the deletions: the next scan finds nothing left.
    await waitFor('the cache to see the claims gone', async () =>
      statefulSetIn(await pruner!.scan(), 'shop', 'orders-db').orphans
        .length === 0
        ? true
        : undefined,
    );
  });

  it('closes its watches when the backend stops', async () => {
    await pruner!.scan();
    await cacheWatching(sim);

    await pruner!.stop();
    pruner = undefined;
    sim.clearRequests();
    await sleep(300);

    expect(sim.dropWatches()).toBe(0);
    expect(sim.requests()).toEqual([]);
  });
});
