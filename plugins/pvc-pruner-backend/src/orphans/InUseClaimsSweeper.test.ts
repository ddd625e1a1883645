import { mockServices, TestDatabases } from '@backstage/backend-test-utils';
import { KubeSim, pod } from 'kube-sim';
import { eventually } from '../__testUtils__/eventually';
import {
  gatewaysTo,
  startShopSimulator,
  syncedDemoCaches,
} from '../__testUtils__/shopSimulator';
import { InUseClaim, OrphanSightingStore } from '../database';
import { ClusterCaches, KubeGateways } from '../kubernetes';
import {
  IN_USE_CLAIMS_TASK_ID,
  InUseClaimsSweeper,
} from './InUseClaimsSweeper';

jest.setTimeout(20000);

const databases = TestDatabases.create({
  ids: ['SQLITE_3'],
  disableDocker: true,
});
const NOV_3 = new Date('2026-11-03T08:00:00.000Z');
const DEC_1 = new Date('2026-12-01T08:00:00.000Z');

let sim: KubeSim;
let gateways: KubeGateways;
let caches: ClusterCaches;
let clock: Date;
let sightings: OrphanSightingStore;
/** What each sweep asked the store to forget. */
let forgotten: InUseClaim[][];

beforeAll(async () => {
  ({ sim } = await startShopSimulator());
  gateways = gatewaysTo(sim);
});

beforeEach(async () => {
  clock = NOV_3;
  forgotten = [];
  const knex = await databases.init('SQLITE_3');
  sightings = await OrphanSightingStore.create({
    database: { getClient: async () => knex, migrations: { skip: false } },
    now: () => clock,
  });
  caches = await syncedDemoCaches(gateways);
});

afterEach(async () => {
  await caches.stop();
  for (const p of sim.store.list('pods', { namespace: 'shop' }).items)
    sim.store.delete('pods', 'shop', p.metadata.name, {
      gracePeriodSeconds: 0,
    });
});

afterAll(async () => {
  await sim.close();
});

function sweeper() {
  return new InUseClaimsSweeper({
    caches,
    sightings: {
      forgetInUse: async (cluster, claims) => {
        forgotten.push(claims);
        return sightings.forgetInUse(cluster, claims);
      },
    },
  });
}

const cache = () => caches.readyCaches()[0].cache;

async function startPod(name: string, claimName: string) {
  const created = sim.store.create('pods', pod(name, [claimName], {}, 'shop'));
  await eventually(`the cache has pod ${name}`, () =>
    cache().pods.get('shop', name)?.metadata?.uid === created.metadata.uid
      ? true
      : undefined,
  );
}

async function stopPod(name: string) {
  sim.store.delete('pods', 'shop', name, { gracePeriodSeconds: 0 });
  await eventually(`the cache lost pod ${name}`, () =>
    cache().pods.get('shop', name) ? undefined : true,
  );
}

const orphanSeen = (uid: string, name: string) =>
  sightings.record([{ uid, cluster: 'demo', namespace: 'shop', name }]);

describe('InUseClaimsSweeper', () => {
  it('forgets the first sighting of a claim a pod mounted for a while with no scan: orphaned again, its grace starts over', async () => {
    await orphanSeen('backup-uid', 'data-ledger-0');
    const sweep = sweeper();
    await sweep.sweep();

    // A backup Job mounts the claim for a few minutes between two runs.
    await startPod('backup', 'data-ledger-0');
    await sweep.sweep();
    await stopPod('backup');
    await sweep.sweep();

    clock = DEC_1;
    expect(
      (await orphanSeen('backup-uid', 'data-ledger-0')).get('backup-uid'),
    ).toBe(DEC_1.toISOString());
  });

  it('sends every referenced claim at its first sweep, then only those newly referenced, and nothing for unchanged pods', async () => {
    await startPod('ledger-0', 'data-ledger-0');
    const sweep = sweeper();

    await sweep.sweep();
    expect(forgotten).toEqual([[{ namespace: 'shop', name: 'data-ledger-0' }]]);

    await sweep.sweep();
    await startPod('ledger-1', 'data-ledger-1');
    await sweep.sweep();
    expect(forgotten.filter(claims => claims.length > 0)).toEqual([
      [{ namespace: 'shop', name: 'data-ledger-0' }],
      [{ namespace: 'shop', name: 'data-ledger-1' }],
    ]);
  });

  it('forgets again a claim whose pod was re-created under the same name between two sweeps', async () => {
    await startPod('ledger-0', 'data-ledger-0');
    const sweep = sweeper();
    await sweep.sweep();

    // The pod goes; a scan sees the claim orphaned; the pod is back before the next sweep.
    await stopPod('ledger-0');
    await orphanSeen('ledger-uid', 'data-ledger-0');
    await startPod('ledger-0', 'data-ledger-0');
    await sweep.sweep();

    expect(await sightings.firstSeenInDatabase(['ledger-uid'])).toEqual(
      new Map(),
    );
  });

  it('sends everything again for a cache that was not ready at a sweep', async () => {
    await startPod('ledger-0', 'data-ledger-0');
    let cacheReady = true;
    const sweep = new InUseClaimsSweeper({
      caches: { readyCaches: () => (cacheReady ? caches.readyCaches() : []) },
      sightings: {
        forgetInUse: async (_cluster, claims) => {
          forgotten.push(claims);
          return 0;
        },
      },
    });
    await sweep.sweep();
    cacheReady = false;
    await sweep.sweep();
    cacheReady = true;
    await sweep.sweep();

    expect(forgotten).toEqual([
      [{ namespace: 'shop', name: 'data-ledger-0' }],
      [{ namespace: 'shop', name: 'data-ledger-0' }],
    ]);
  });

  it("sweeps each replica's own caches every few seconds", async () => {
    const scheduler = mockServices.scheduler.mock();

    await InUseClaimsSweeper.schedule(scheduler, {
      caches: { readyCaches: () => [] },
      sightings: { forgetInUse: async () => 0 },
    });

    expect(scheduler.scheduleTask).toHaveBeenCalledWith(
      expect.objectContaining({
        id: IN_USE_CLAIMS_TASK_ID,
        scope: 'local',
        frequency: { seconds: 10 },
      }),
    );
  });
});
