/**
 * Review findings (branch review-left) against the claims of deleted
 * StatefulSets. Each test states the behaviour the feature should have and
 * fails on main as merged (4ea0dd6 + 3e0397f); see the review report.
 */
import type { DatabaseService } from '@backstage/backend-plugin-api';
import {
  mockCredentials,
  mockServices,
  TestDatabaseId,
} from '@backstage/backend-test-utils';
import { Entity, stringifyEntityRef } from '@backstage/catalog-model';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { PruneRequest } from 'backstage-plugin-pvc-pruner-common';
import type { Knex } from 'knex';
import { componentEntity } from '../__testUtils__/catalogEntities';
import { storeTestDatabases } from '../__testUtils__/testDatabases';
import type { KubeGateway, KubeGateways, LocatedCluster } from '../kubernetes';
import { ClaimLineageStore } from '../lineage';
import {
  ClaimantIndex,
  NamespaceOwners,
  OwnershipChecks,
  WorkloadCatalog,
  workloadEntityOf,
} from '../ownership';
import type { FoundGroup } from './leftBehindGroups';
import { leftBehindIn } from './leftBehindGroups';
import { LeftBehindAccess } from './LeftBehindAccess';
import { LeftBehindFinder } from './LeftBehindFinder';
import { FleetLeftBehindReader } from './FleetLeftBehind';

const NS = 'shop';
const ref = (e: Entity) => stringifyEntityRef(e);

function claim(
  name: string,
  labels: Record<string, string>,
  extra: Partial<V1PersistentVolumeClaim['metadata']> = {},
): V1PersistentVolumeClaim {
  return {
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      resourceVersion: '1',
      labels,
      ...extra,
    },
    spec: { resources: { requests: { storage: '1Gi' } } },
  };
}

const orphanNames = (groups: FoundGroup[]) =>
  groups.flatMap(g => g.report.orphans.map(o => o.name));

const databases = storeTestDatabases();

describe.each(databases.eachSupportedId())(
  'review-left F1: lineage of claims still left behind, on %s',
  (databaseId: TestDatabaseId) => {
    const DAY = 24 * 60 * 60_000;
    const DELETED_AT = new Date('2026-09-01T08:00:00.000Z');
    const orders = componentEntity('orders');
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
          claimants: [ref(orders)],
        },
      ]);
      // The claim stays (whenDeleted: Retain); its labels match no entity's selector.
      const left = claim('data-orders-db-0', { app: 'orders-db' });
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
        await lineage.deleteNotSeenFor(90 * DAY);
      }
      // Shown under orders-db, by its lineage, while the lineage lasts ...
      expect(evidenceByDay[88]).toEqual(['lineage']);
      // ... and still once the StatefulSet has been gone longer than retentionDays.
      const [group] = await finder.groupsIn(gateway, [NS]);
      expect(group).toMatchObject({
        statefulSet: { name: 'orders-db', uid: 'sts-uid' },
        evidence: 'lineage',
        claimants: [ref(orders)],
      });
    });
  },
);
