import { TEST_SEAL } from '../__testUtils__/testSeal';
import { PriceList } from '../cost';
import { mockCredentials } from '@backstage/backend-test-utils';
import type {
  ClusterOrphans,
  OrphansResponse,
} from 'backstage-plugin-pvc-pruner-common';
import { ClusterRequestError } from '../kubernetes';
import type { EntityWorkloadTarget } from '../orphans';
import {
  FakeRestoreCluster,
  prunersSnapshot,
  SNAPSHOT_NAME,
} from '../__testUtils__/fakeRestoreCluster';
import {
  orphanedClaim,
  statefulSetReport,
} from '../__testUtils__/orphanReports';
import { KeptSnapshots } from './KeptSnapshots';

const ORDERS = 'component:default/orders';
const TARGET = {
  entityRef: ORDERS,
  labelSelector: 'backstage.io/kubernetes-id=orders',
} as EntityWorkloadTarget;
const GI20 = 20 * 2 ** 30;

/** orders-db as the orphan scan reports it: 2 replicas of data and wal, data-orders-db-2 orphaned. */
const ORDERS_DB = statefulSetReport(
  'shop',
  'orders-db',
  [orphanedClaim('orders-db', 2, 10)],
  {
    replicas: 2,
    ordinals: { start: 0, end: 2 },
    templates: ['data', 'wal'],
    inUse: [{ template: 'data', ordinals: [0, 1] }],
  },
);

function snapshotNamed(
  name: string,
  created: string,
  claimName = 'data-orders-db-3',
) {
  const s = prunersSnapshot({
    'pvc-pruner.backstage.io/claim-name': claimName,
  });
  s.metadata!.name = name;
  s.metadata!.uid = `uid-${name}`;
  s.metadata!.creationTimestamp = created as unknown as Date;
  s.spec!.source!.persistentVolumeClaimName = claimName;
  return s;
}

describe('KeptSnapshots', () => {
  let cluster: FakeRestoreCluster;
  let sections: ClusterOrphans[];
  let findForEntity: jest.Mock;
  let readable: jest.Mock;

  beforeEach(() => {
    cluster = new FakeRestoreCluster();
    sections = [{ cluster: 'demo', ok: true, statefulSets: [ORDERS_DB] }];
    findForEntity = jest.fn(
      async (): Promise<OrphansResponse> => ({
        entityRef: ORDERS,
        clusters: sections,
        totals: { orphans: 1, reclaimableBytes: 0, retainedBytes: 0 },
      }),
    );
    readable = jest.fn(async () => []);
  });

  const list = (
    options: Partial<ConstructorParameters<typeof KeptSnapshots>[1]> = {},
  ) =>
    new KeptSnapshots(
      {
        orphanFinder: { findForEntity },
        gateways: { for: async () => cluster.asGateway() },
        ownership: { readable },
        seal: TEST_SEAL,
      },
      { retentionDays: 7, ...options },
    ).list(TARGET, mockCredentials.user());

  it('lists the readable StatefulSets’ snapshots by the managed-by label, each with its expiry and whether it can be restored', async () => {
    const response = await list();

    expect(cluster.calls).toEqual([
      'list volumesnapshots shop app.kubernetes.io/managed-by=pvc-pruner',
    ]);
    expect(response).toEqual({
      entityRef: ORDERS,
      clusters: [
        {
          cluster: 'demo',
          ok: true,
          statefulSets: [
            {
              namespace: 'shop',
              name: 'orders-db',
              snapshots: [
                {
                  name: SNAPSHOT_NAME,
                  namespace: 'shop',
                  uid: expect.any(String),
                  statefulSet: 'orders-db',
                  claimName: 'data-orders-db-3',
                  claimUid: 'claim-uid-3',
                  jobId: expect.any(String),
                  createdAt: '2026-01-01T00:00:00.000Z',
                  readyToUse: true,
                  restoreSize: '20Gi',
                  restoreBytes: GI20,
                  expiresAt: '2026-01-08T00:00:00.000Z',
                  restorable: true,
                },
              ],
            },
          ],
        },
      ],
      totals: { snapshots: 1, bytes: GI20 },
    });
  });

  it('shows only what the orphans’ read admits: the scan is asked with the caller’s readable check', async () => {
    await list();
    const admit = findForEntity.mock.calls[0][2];
    await admit([]);
    expect(readable).toHaveBeenCalledWith(expect.anything(), [], {
      readable: new Set([ORDERS]),
      through: TARGET,
    });
  });

  it('leaves out snapshots of other StatefulSets and other namespaces', async () => {
    cluster.addSnapshot(
      prunersSnapshot(
        {},
        { 'pvc-pruner.backstage.io/statefulset': 'payments-db' },
      ),
    );
    const other = snapshotNamed('elsewhere', '2026-01-02T00:00:00Z');
    other.metadata!.namespace = 'billing';
    cluster.addSnapshot(other);

    const response = await list();

    const names = response.clusters.flatMap(c =>
      c.ok ? c.statefulSets.flatMap(s => s.snapshots.map(k => k.name)) : [],
    );
    expect(names).toEqual([]);
  });

  it('leaves out a snapshot only labelled as pvc-pruner’s, without its seal', async () => {
    cluster.addSnapshot(prunersSnapshot(), { sealed: false });
    const response = await list();
    expect(response.totals.snapshots).toBe(0);
  });

  it('lists newest first, at most the cap, and counts the rest', async () => {
    cluster.snapshots.clear();
    cluster.addSnapshot(snapshotNamed('old', '2026-01-01T00:00:00Z'));
    cluster.addSnapshot(snapshotNamed('new', '2026-01-03T00:00:00Z'));
    cluster.addSnapshot(snapshotNamed('mid', '2026-01-02T00:00:00Z'));

    const response = await list({ maxPerStatefulSet: 2 });

    const [section] = response.clusters;
    const [sts] = section.ok ? section.statefulSets : [];
    expect(sts.snapshots.map(s => s.name)).toEqual(['new', 'mid']);
    expect(sts.notListed).toBe(1);
    expect(response.totals).toEqual({ snapshots: 3, bytes: 3 * GI20 });
  });

  it.each<[string, () => void, RegExp]>([
    [
      'not ready',
      () => {
        const s = prunersSnapshot();
        s.status = { readyToUse: false };
        cluster.addSnapshot(s);
      },
      /not ready/,
    ],
    [
      'failed',
      () => {
        const s = prunersSnapshot();
        s.status!.error = { message: 'quota' };
        cluster.addSnapshot(s);
      },
      /failed: quota/,
    ],
    [
      'of a claim that exists now',
      () => {
        cluster.snapshots.clear();
        cluster.addSnapshot(
          snapshotNamed('of-2', '2026-01-01T00:00:00Z', 'data-orders-db-2'),
        );
      },
      /a claim named data-orders-db-2 exists/,
    ],
    [
      'of a claim in use',
      () => {
        cluster.snapshots.clear();
        cluster.addSnapshot(
          snapshotNamed('of-1', '2026-01-01T00:00:00Z', 'data-orders-db-1'),
        );
      },
      /a claim named data-orders-db-1 exists/,
    ],
    [
      'without a claim-name annotation',
      () => {
        const s = prunersSnapshot();
        delete s.metadata!.annotations!['pvc-pruner.backstage.io/claim-name'];
        cluster.addSnapshot(s);
      },
      /no pvc-pruner.backstage.io\/claim-name annotation/,
    ],
  ])(
    'says a snapshot %s cannot be restored, and why',
    async (_what, arrange, why) => {
      arrange();
      const response = await list();
      const [section] = response.clusters;
      const [kept] = section.ok ? section.statefulSets[0].snapshots : [];
      expect(kept.restorable).toBe(false);
      expect(kept.notRestorable).toMatch(why);
    },
  );

  it('shows a later keep-until as the expiry, and an unreadable one apart', async () => {
    cluster.addSnapshot(
      prunersSnapshot({
        'pvc-pruner.backstage.io/keep-until': '2026-02-01T00:00:00Z',
      }),
    );
    let [section] = (await list()).clusters;
    expect(section.ok && section.statefulSets[0].snapshots[0]).toMatchObject({
      expiresAt: '2026-02-01T00:00:00.000Z',
      keepUntil: '2026-02-01T00:00:00.000Z',
    });
    cluster.addSnapshot(
      prunersSnapshot({ 'pvc-pruner.backstage.io/keep-until': 'soon' }),
    );
    [section] = (await list()).clusters;
    expect(section.ok && section.statefulSets[0].snapshots[0]).toMatchObject({
      expiresAt: '2026-01-08T00:00:00.000Z',
      keepUntilUnreadable: 'soon',
    });
  });

  it('prices each snapshot and the totals when given a price', async () => {
    const response = await list({
      prices: PriceList.of({ currency: 'EUR', snapshotPricePerGiBMonth: 0.05 }),
    });
    const [section] = response.clusters;
    expect(section.ok && section.statefulSets[0].snapshots[0].monthlyCost).toBe(
      1,
    );
    expect(response.totals.monthlyCost).toBe(1);
    expect(response.pricing).toEqual({
      currency: 'EUR',
      unpricedStorageClasses: [],
      snapshotPricePerGiBMonth: 0.05,
    });
  });

  it('makes a cluster without the snapshot API, or that fails, a section of its own; a failed scan stays one', async () => {
    const failedScan: ClusterOrphans = {
      cluster: 'gone',
      ok: false,
      error: { name: 'ClusterRequestError', message: 'unreachable' },
    };
    sections.push(failedScan);
    cluster.failWith = new ClusterRequestError(
      'demo',
      'cluster "demo" refused list volumesnapshots in shop: 404 NotFound',
      404,
      'NotFound',
    );

    const response = await list();

    expect(response.clusters).toEqual([
      {
        cluster: 'demo',
        ok: false,
        error: {
          name: 'ClusterRequestError',
          message: expect.stringContaining(
            'serves no VolumeSnapshots (snapshot.storage.k8s.io/v1)',
          ),
          statusCode: 404,
        },
      },
      failedScan,
    ]);
    expect(response.totals).toEqual({ snapshots: 0, bytes: 0 });
  });
});
