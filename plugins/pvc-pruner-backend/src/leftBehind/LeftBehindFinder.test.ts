import type { DatabaseService } from '@backstage/backend-plugin-api';
import type { TestDatabaseId } from '@backstage/backend-test-utils';
import { stringifyEntityRef } from '@backstage/catalog-model';
import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import type { LeftBehindGroup } from 'backstage-plugin-pvc-pruner-common';
import type { Knex } from 'knex';
import { componentEntity, uidsOf } from '../__testUtils__/catalogEntities';
import { storeTestDatabases } from '../__testUtils__/testDatabases';
import type { KubeGateway, KubeGateways, LocatedCluster } from '../kubernetes';
import { ClaimLineage, ClaimLineageStore } from '../lineage';
import { ClaimantIndex, workloadEntityOf } from '../ownership';
import type { FoundGroup } from './leftBehindGroups';
import { LeftBehindFinder } from './LeftBehindFinder';

const NS = 'shop';
const orders = componentEntity('orders');
const ledger = componentEntity('ledger');
const ORDERS = stringifyEntityRef(orders);
const LEDGER = stringifyEntityRef(ledger);

function claim(name: string): V1PersistentVolumeClaim {
  return {
    metadata: { name, namespace: NS, uid: `uid-${name}`, resourceVersion: '1' },
    spec: {
      volumeName: `pv-${name}`,
      resources: { requests: { storage: '1Gi' } },
    },
    status: { phase: 'Bound', capacity: { storage: '1Gi' } },
  };
}

function volume(name: string): V1PersistentVolume {
  return {
    metadata: { name },
    spec: { persistentVolumeReclaimPolicy: 'Retain' },
    status: { phase: 'Bound' },
  };
}

/** Claims data-<sts>-<ordinal> recorded under deleted StatefulSet <sts>, claimed by `claimants`. */
function recorded(sts: string, count: number, claimants: string[]) {
  return Array.from({ length: count }, (_, ordinal): ClaimLineage => {
    const name = `data-${sts}-${ordinal}`;
    return {
      cluster: 'prod',
      namespace: NS,
      claimUid: `uid-${name}`,
      claimName: name,
      statefulSet: { name: sts, uid: `deleted-${sts}` },
      template: 'data',
      ordinal,
      claimants,
      claimantUids: uidsOf(claimants),
      claimantsCrowded: false,
      lastSeenAt: '2026-12-01T00:00:00.000Z',
    };
  });
}

/** A finder over one cluster without a watch cache, and the volume reads it made. */
function finderOver(lineage: ClaimLineage[]) {
  const claims = lineage.map(l => claim(l.claimName));
  const reads = { gets: [] as string[], lists: 0 };
  const gateway = {
    cluster: 'prod',
    listClaims: async () => claims,
    listClaimsMatching: async () => [],
    listPods: async () => [],
    listStatefulSets: async () => [],
    listAutoscalers: async () => ({ items: [] }),
    readVolume: async (name: string) => {
      reads.gets.push(name);
      return volume(name);
    },
    listCollection: async () => {
      reads.lists++;
      return {
        items: [...claims.map(c => volume(c.spec!.volumeName!))],
        resourceVersion: '1',
      };
    },
  } as unknown as KubeGateway;
  const finder = new LeftBehindFinder({
    gateways: {
      list: async () => [{ name: 'prod' } as LocatedCluster],
      forCluster: () => gateway,
    } as unknown as KubeGateways,
    lineage: {
      lineageOf: async (_cluster, uids) =>
        new Map(
          lineage
            .filter(l => uids.includes(l.claimUid))
            .map(l => [l.claimUid, l]),
        ),
      lineageClaimedBy: async (_cluster, ref) =>
        lineage.filter(l => l.claimants.includes(ref)),
    },
    workloads: {
      warm: async () =>
        new ClaimantIndex([
          workloadEntityOf(orders)!,
          workloadEntityOf(ledger)!,
        ]),
    },
  });
  return { finder, reads };
}

/** orders' caller: every group with another claimant is refused. */
const admitOrdersOnly = async (groups: FoundGroup[]) =>
  groups.map(g => ({
    refused: g.claimants.filter(ref => ref !== ORDERS),
    crowded: false,
  }));

async function groupsShown(
  finder: LeftBehindFinder,
): Promise<LeftBehindGroup[]> {
  const { clusters } = await finder.findForEntity(
    workloadEntityOf(orders)!,
    {},
    admitOrdersOnly,
  );
  const [section] = clusters;
  if (!section.ok) throw new Error('the cluster failed');
  return section.groups;
}

describe('LeftBehindFinder, recorded claimants', () => {
  it('says which recorded claimants the catalog no longer has', async () => {
    const { finder } = finderOver(
      recorded('orders-db', 1, ['component:default/ledger-old', ORDERS]),
    );
    const { clusters } = await finder.findForEntity(
      workloadEntityOf(orders)!,
      {},
      async groups => groups.map(() => ({ refused: [], crowded: false })),
    );
    const [section] = clusters;
    expect(section.ok && section.groups[0]).toMatchObject({
      claimants: ['component:default/ledger-old', ORDERS],
      claimantsNotInCatalog: ['component:default/ledger-old'],
    });
  });
});

describe('LeftBehindFinder, reading volumes', () => {
  it('reads the volumes of the groups shown only, after the permission check, not those of groups withheld', async () => {
    const { finder, reads } = finderOver([
      ...recorded('orders-db', 2, [ORDERS]),
      ...recorded('ledger-db', 2, [LEDGER, ORDERS]),
    ]);
    const [shown, ...rest] = await groupsShown(finder);
    expect(rest).toEqual([]);
    expect(shown.statefulSet.name).toBe('orders-db');
    expect(shown.report.orphans.map(o => o.volume?.reclaimPolicy)).toEqual([
      'Retain',
      'Retain',
    ]);
    expect(reads.gets.sort()).toEqual([
      'pv-data-orders-db-0',
      'pv-data-orders-db-1',
    ]);
  });

  it('reads many volumes with one list of the cluster’s volumes instead of a GET each', async () => {
    const { finder, reads } = finderOver(recorded('orders-db', 25, [ORDERS]));
    const [shown] = await groupsShown(finder);
    expect(shown.report.orphans).toHaveLength(25);
    expect(
      shown.report.orphans.every(o => o.volume?.reclaimPolicy === 'Retain'),
    ).toBe(true);
    expect(reads).toEqual({ gets: [], lists: 1 });
  });
});

function withLabels(
  c: V1PersistentVolumeClaim,
  labels: Record<string, string>,
): V1PersistentVolumeClaim {
  return { ...c, metadata: { ...c.metadata, labels } };
}

const databases = storeTestDatabases();

describe.each(databases.eachSupportedId())(
  'LeftBehindFinder, with lineage kept in the database, on %s',
  (databaseId: TestDatabaseId) => {
    const DAY = 24 * 60 * 60_000;
    const DELETED_AT = new Date('2026-09-01T08:00:00.000Z');
    let knex: Knex;

    beforeEach(async () => {
      knex = await databases.init(databaseId);
    });

    it('keeps what the claims belonged to for as long as the claims exist, past retentionDays after the StatefulSet was deleted', async () => {
      let clock = DELETED_AT;
      const database: DatabaseService = {
        getClient: async () => knex,
        migrations: { skip: false },
      };
      const lineage = await ClaimLineageStore.create({
        database,
        now: () => clock,
      });
      // The last scan that saw StatefulSet orders-db, just before `kubectl delete sts orders-db`.
      await lineage.record([
        {
          cluster: 'prod',
          namespace: NS,
          claimUid: 'uid-data-orders-db-0',
          statefulSet: { name: 'orders-db', uid: 'sts-uid' },
          template: 'data',
          ordinal: 0,
          claimants: [ORDERS],
          claimantUids: uidsOf([ORDERS]),
        },
      ]);
      // The claim stays (whenDeleted: Retain); its labels match no entity's selector.
      const left = withLabels(claim('data-orders-db-0'), { app: 'orders-db' });
      const gateway = {
        cluster: 'prod',
        listClaims: async () => [left],
        listPods: async () => [],
        listStatefulSets: async () => [],
        listAutoscalers: async () => ({ items: [] }),
        readVolume: async () => undefined,
      } as unknown as KubeGateway;
      const index = new ClaimantIndex([workloadEntityOf(orders)!]);
      const finder = new LeftBehindFinder({
        gateways: {} as KubeGateways,
        lineage,
        workloads: { warm: async () => index },
      });

      // Seen on the card every day for 100 days; the retention task (90 days, the default) runs daily.
      const evidenceByDay: string[][] = [];
      for (let day = 1; day <= 100; day++) {
        clock = new Date(DELETED_AT.getTime() + day * DAY);
        const groups = await finder.groupsIn(gateway, [NS]);
        evidenceByDay.push(groups.map(g => g.evidence));
        // The claim is still in the cluster, as the watch cache tells retention.
        await lineage.deleteNotSeenFor(
          90 * DAY,
          () => new Set([left.metadata!.uid!]),
        );
      }
      // Shown under orders-db, by its lineage, while the lineage lasts ...
      expect(evidenceByDay[88]).toEqual(['lineage']);
      // ... and still once the StatefulSet has been gone longer than retentionDays.
      const [group] = await finder.groupsIn(gateway, [NS]);
      expect(group).toMatchObject({
        statefulSet: { name: 'orders-db', uid: 'sts-uid' },
        evidence: 'lineage',
        claimants: [ORDERS],
      });
    });
  },
);
