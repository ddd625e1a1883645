import { mockCredentials } from '@backstage/backend-test-utils';
import type { KubeGateways, LocatedCluster } from '../kubernetes';
import { statefulSetReport } from '../__testUtils__/orphanReports';
import { FleetLeftBehindReader } from './FleetLeftBehind';
import type { FoundGroup } from './leftBehindGroups';

describe('FleetLeftBehindReader, in a cluster where many namespaces have lineage', () => {
  // 60 namespaces with lineage, of which the store answers at most `limit`.
  const withLineage = Array.from(
    { length: 60 },
    (_, i) => `team-${String(i).padStart(2, '0')}`,
  );

  async function namespacesRead(namespace?: string) {
    const read: string[][] = [];
    const reader = new FleetLeftBehindReader({
      gateways: {
        forCluster: () => ({ cluster: 'prod' }),
      } as unknown as KubeGateways,
      lineage: {
        namespacesWithLineage: async (_cluster, limit, only) =>
          withLineage.filter(ns => !only || ns === only).slice(0, limit),
      },
      finder: {
        cacheOf: async () => undefined,
        groupsIn: async (_gateway, namespaces) => {
          read.push(namespaces);
          return [];
        },
        withVolumesAndCosts: async (_gateway, groups) => groups,
      },
      access: {
        readable: async (_credentials, groups) =>
          groups.map(() => ({ refused: [], crowded: false })),
      },
    });
    await reader.read({
      clusters: [{ name: 'prod' } as LocatedCluster],
      requestAuth: {},
      credentials: mockCredentials.user(),
      readable: new Set(),
      namespace,
    });
    return read;
  }

  it('reads the namespace the fleet page is filtered to, whatever its place among the namespaces with lineage', async () => {
    expect(await namespacesRead('team-59')).toEqual([['team-59']]);
  });

  it('reads at most 50 namespaces unfiltered', async () => {
    const [namespaces] = await namespacesRead();
    expect(namespaces).toHaveLength(50);
  });
});

describe('FleetLeftBehindReader, reading volumes', () => {
  function group(name: string, claimants: string[]): FoundGroup {
    return {
      namespace: 'shop',
      statefulSet: { name, uid: `deleted-${name}` },
      evidence: 'lineage',
      claimants,
      crowded: false,
      report: statefulSetReport('shop', name, [], { replicas: 0 }),
    };
  }

  it('reads volumes and costs only for the groups it lists: those the caller may read, and the unclaimed', async () => {
    const priced: string[] = [];
    const reader = new FleetLeftBehindReader({
      gateways: {
        forCluster: () => ({ cluster: 'prod' }),
      } as unknown as KubeGateways,
      lineage: { namespacesWithLineage: async () => ['shop'] },
      finder: {
        cacheOf: async () => undefined,
        groupsIn: async () => [
          group('orders-db', ['component:default/orders']),
          group('ledger-db', ['component:default/ledger']),
          group('nobodys-db', []),
        ],
        withVolumesAndCosts: async (_gateway, groups) => {
          priced.push(...groups.map(g => g.statefulSet.name));
          return groups;
        },
      },
      access: {
        readable: async (_credentials, groups) =>
          groups.map(g => ({
            refused: g.claimants.filter(
              ref => ref !== 'component:default/orders',
            ),
            crowded: false,
          })),
      },
    });
    const { byEntity, unclaimed } = await reader.read({
      clusters: [{ name: 'prod' } as LocatedCluster],
      requestAuth: {},
      credentials: mockCredentials.user(),
      readable: new Set(['component:default/orders']),
    });
    expect(priced.sort()).toEqual(['nobodys-db', 'orders-db']);
    expect(
      byEntity.get('component:default/orders')!.map(r => r.row.name),
    ).toEqual(['orders-db']);
    expect(unclaimed.map(r => r.row.name)).toEqual(['nobodys-db']);
  });
});

describe('FleetLeftBehindReader, claims whose every recorded claimant left the catalog', () => {
  it('lists them for the platform (Unowned), the only ones who may prune them: no card exists for them and no entity row names them', async () => {
    const gone: FoundGroup = {
      namespace: 'payments',
      statefulSet: { name: 'ledger-db', uid: 'deleted-ledger-db' },
      evidence: 'lineage',
      claimants: ['component:default/ledger'],
      claimantsNotInCatalog: ['component:default/ledger'],
      unverifiedClaimants: ['component:default/ledger'],
      ownerNotice: 'recorded owner component:default/ledger no longer exists',
      crowded: false,
      report: statefulSetReport('payments', 'ledger-db', [], { replicas: 0 }),
    };
    const reader = new FleetLeftBehindReader({
      gateways: {
        forCluster: () => ({ cluster: 'prod' }),
      } as unknown as KubeGateways,
      lineage: { namespacesWithLineage: async () => ['payments'] },
      finder: {
        cacheOf: async () => undefined,
        groupsIn: async () => [gone],
        withVolumesAndCosts: async (_gateway, groups) => groups,
      },
      // A platform reader: every check passes.
      access: {
        readable: async (_credentials, groups) =>
          groups.map(() => ({ refused: [], crowded: false })),
      },
    });
    const { byEntity, unclaimed } = await reader.read({
      clusters: [{ name: 'prod' } as LocatedCluster],
      requestAuth: {},
      credentials: mockCredentials.user(),
      // The catalog's entities the caller may read: ledger is not among them, it is gone.
      readable: new Set(['component:default/orders']),
    });
    const listed = [...unclaimed, ...[...byEntity.values()].flat()].map(
      r => r.row.name,
    );
    expect(listed).toEqual(['ledger-db']);
  });
});
