import { mockServices } from '@backstage/backend-test-utils';
import { KubeSim, pvc, statefulSet } from 'kube-sim';
import { componentEntity } from '../__testUtils__/catalogEntities';
import { eventually } from '../__testUtils__/eventually';
import {
  gatewaysTo,
  startShopSimulator,
  syncedDemoCaches,
} from '../__testUtils__/shopSimulator';
import { ClusterCaches, KubeGateways } from '../kubernetes';
import { ClaimantIndex, workloadEntityOf } from '../ownership';
import type { ClaimLineageRecord } from './ClaimLineageStore';
import { LineageRecorder } from './LineageRecorder';
import {
  WATCH_CACHE_LINEAGE_TASK_ID,
  WatchCacheLineage,
} from './WatchCacheLineage';

jest.setTimeout(20000);

let sim: KubeSim;
let gateways: KubeGateways;
let caches: ClusterCaches;

beforeAll(async () => {
  ({ sim } = await startShopSimulator());
  gateways = gatewaysTo(sim);
});

afterEach(async () => {
  await caches?.stop();
});

afterAll(async () => {
  await sim.close();
});

function addStatefulSet(name: string, claims: number) {
  sim.store.create(
    'apps/statefulsets',
    statefulSet(name, { replicas: 1 }, 'shop', {
      'backstage.io/kubernetes-id': name,
    }),
  );
  for (let i = 0; i < claims; i++)
    sim.store.create(
      'persistentvolumeclaims',
      pvc(`data-${name}-${i}`, {}, 'shop'),
    );
}

/** A sweep over the demo cluster's cache, recording into `recorded`. */
async function sweepOfReadyCache(recorded: ClaimLineageRecord[]) {
  caches = await syncedDemoCaches(gateways);
  const recorder = new LineageRecorder({
    store: { record: async records => void recorded.push(...records) },
    workloads: {
      warm: async () =>
        new ClaimantIndex(
          [componentEntity('ledger'), componentEntity('search')].flatMap(
            e => workloadEntityOf(e) ?? [],
          ),
        ),
    },
    logger: mockServices.logger.mock(),
  });
  return new WatchCacheLineage({ caches, recorder });
}

const names = (records: ClaimLineageRecord[]) =>
  [
    ...new Set(
      records.map(
        r =>
          `${r.template}-${r.statefulSet.name}-${r.ordinal} ${r.claimants.join(
            ',',
          )}`,
      ),
    ),
  ].sort();

describe('WatchCacheLineage', () => {
  it('records the lineage of every StatefulSet a watch cache holds, with no scan, and of one created since', async () => {
    addStatefulSet('ledger', 2);
    const recorded: ClaimLineageRecord[] = [];
    const sweep = await sweepOfReadyCache(recorded);

    await sweep.sweep();
    expect(names(recorded)).toEqual([
      'data-ledger-0 component:default/ledger',
      'data-ledger-1 component:default/ledger',
    ]);

    addStatefulSet('search', 1);
    await eventually('the cache has search', () =>
      caches.readyCaches()[0]?.cache.claims.get('shop', 'data-search-0'),
    );
    await sweep.sweep();
    expect(names(recorded)).toContain('data-search-0 component:default/search');
    expect(recorded.every(r => r.cluster === 'demo')).toBe(true);
  });

  it("sweeps each replica's own caches every few minutes", async () => {
    const scheduler = mockServices.scheduler.mock();

    await WatchCacheLineage.schedule(scheduler, {
      caches: { readyCaches: () => [] },
      recorder: { saw: async () => {} },
    });

    expect(scheduler.scheduleTask).toHaveBeenCalledWith(
      expect.objectContaining({
        id: WATCH_CACHE_LINEAGE_TASK_ID,
        scope: 'local',
        frequency: { minutes: 5 },
      }),
    );
  });
});
