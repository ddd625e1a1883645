import { mockCredentials } from '@backstage/backend-test-utils';
import type { KubeGateways, LocatedCluster } from '../kubernetes';
import { FleetLeftBehindReader } from './FleetLeftBehind';

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
