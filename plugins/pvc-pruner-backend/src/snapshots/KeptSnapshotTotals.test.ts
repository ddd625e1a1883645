import { TEST_SEAL } from '../__testUtils__/testSeal';
import { PriceList } from '../cost';
import {
  ClusterRequestError,
  type KubeGateway,
  type LocatedCluster,
} from '../kubernetes';
import type { VolumeSnapshot } from '../kubernetes/volumeSnapshotTypes';
import { KeptSnapshotTotals } from './KeptSnapshotTotals';
import { labelValue } from './snapshotMetadata';

const GIB = 2 ** 30;
const LONG = 'a'.repeat(70);

const kept = (
  namespace: string,
  statefulSet: string,
  restoreSize?: string,
): VolumeSnapshot =>
  TEST_SEAL.sealed({
    metadata: {
      name: `snap-${Math.random()}`,
      namespace,
      labels: {
        'app.kubernetes.io/managed-by': 'pvc-pruner',
        'pvc-pruner.backstage.io/statefulset': statefulSet,
      },
    },
    ...(restoreSize ? { status: { restoreSize } } : {}),
  });

function gatewayOf(
  cluster: string,
  serve: () => Promise<VolumeSnapshot[]>,
  actsForUser = false,
) {
  const list = jest.fn(async (_ns: string | undefined, _sel: string) =>
    serve(),
  );
  return {
    list,
    gateway: {
      cluster,
      actsForUser,
      listVolumeSnapshots: list,
    } as unknown as KubeGateway,
  };
}

const located = (name: string) => ({ name } as LocatedCluster);

function setUp(
  gateways: Array<ReturnType<typeof gatewayOf>>,
  prices?: PriceList,
) {
  let now = 1_000_000;
  const totals = new KeptSnapshotTotals({
    gateways: {
      forCluster: c =>
        gateways.find(g => g.gateway.cluster === c.name)!.gateway,
    },
    prices,
    seal: TEST_SEAL,
    now: () => now,
  });
  const clusters = gateways.map(g => located(g.gateway.cluster));
  return {
    totals,
    clusters,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('KeptSnapshotTotals', () => {
  it('counts and sums the kept snapshots of the listed StatefulSets only, by cluster, namespace and statefulset label, priced when snapshots have a price', async () => {
    const demo = gatewayOf('demo', async () => [
      kept('shop', 'orders-db', '20Gi'),
      kept('shop', 'orders-db', '10Gi'),
      kept('shop', 'payments-db', '5Gi'),
      kept('other', 'orders-db', '7Gi'),
      // A StatefulSet name too long for a label value is matched by its hash.
      kept('shop', labelValue(LONG), '1Gi'),
      kept('shop', 'no-size'),
    ]);
    const prod = gatewayOf('prod', async () => [
      kept('shop', 'orders-db', '3Gi'),
    ]);
    const { totals, clusters } = setUp(
      [demo, prod],
      PriceList.of({ currency: 'EUR', snapshotPricePerGiBMonth: 0.05 }),
    );

    const result = await totals.totals(totals.read(clusters), [
      { cluster: 'demo', namespace: 'shop', name: 'orders-db' },
      { cluster: 'demo', namespace: 'shop', name: 'no-size' },
      { cluster: 'demo', namespace: 'shop', name: LONG },
    ]);

    expect(demo.list).toHaveBeenCalledWith(
      undefined,
      'app.kubernetes.io/managed-by=pvc-pruner',
    );
    expect(result).toEqual({
      snapshots: 4,
      bytes: 31 * GIB,
      monthlyCost: expect.closeTo(1.55),
    });
  });

  it('has no cost without a snapshot price', async () => {
    const demo = gatewayOf('demo', async () => [
      kept('shop', 'orders-db', '20Gi'),
    ]);
    const { totals, clusters } = setUp(
      [demo],
      PriceList.of({ currency: 'EUR', defaultPricePerGiBMonth: 0.1 }),
    );
    expect(
      await totals.totals(totals.read(clusters), [
        { cluster: 'demo', namespace: 'shop', name: 'orders-db' },
      ]),
    ).toEqual({ snapshots: 1, bytes: 20 * GIB });
  });

  it('reads each cluster once per 30 s, sharing a read in flight', async () => {
    const demo = gatewayOf('demo', async () => [
      kept('shop', 'orders-db', '1Gi'),
    ]);
    const { totals, clusters, advance } = setUp([demo]);
    await Promise.all([totals.read(clusters), totals.read(clusters)]);
    expect(demo.list).toHaveBeenCalledTimes(1);
    advance(29_000);
    await totals.read(clusters);
    expect(demo.list).toHaveBeenCalledTimes(1);
    advance(2_000);
    await totals.read(clusters);
    expect(demo.list).toHaveBeenCalledTimes(2);
  });

  it('never caches a read made with a user token', async () => {
    const corp = gatewayOf(
      'corp',
      async () => [kept('shop', 'orders-db', '1Gi')],
      true,
    );
    const { totals, clusters } = setUp([corp]);
    await totals.read(clusters);
    await totals.read(clusters);
    expect(corp.list).toHaveBeenCalledTimes(2);
  });

  it('lets a failing cluster, or one without the snapshot API, contribute nothing, and is absent when no cluster could be read', async () => {
    const broken = gatewayOf('broken', async () => {
      throw new ClusterRequestError('broken', 'unreachable');
    });
    const bare = gatewayOf('bare', async () => {
      throw new ClusterRequestError('bare', 'not found', 404, 'NotFound');
    });
    const demo = gatewayOf('demo', async () => [
      kept('shop', 'orders-db', '1Gi'),
    ]);
    const all = setUp([broken, bare, demo]);
    expect(
      await all.totals.totals(all.totals.read(all.clusters), [
        { cluster: 'demo', namespace: 'shop', name: 'orders-db' },
        { cluster: 'broken', namespace: 'shop', name: 'orders-db' },
      ]),
    ).toEqual({ snapshots: 1, bytes: GIB });

    const none = setUp([broken, bare]);
    expect(
      await none.totals.totals(none.totals.read(none.clusters), []),
    ).toBeUndefined();
  });
});
