import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { NotAllowedError } from '@backstage/errors';
import { ledgerGroup } from '../__testUtils__/ledgerGroup';
import type { FoundGroup } from '../leftBehind';
import type { OrphanFinder } from '../orphans';
import type { OwnershipChecks } from '../ownership';
import { UnownedOrphans } from './UnownedOrphans';

/** GET /v1/unowned/orphans?leftBy= for the deleted ledger-db, whose group the finder reads as `group`. */
function read(group: FoundGroup) {
  const unowned = new UnownedOrphans({
    permissions: mockServices.permissions(),
    orphanFinder: {
      clustersOf: async () => [{ name: 'prod' }],
      snapshotSettings: () => ({}),
    } as unknown as OrphanFinder,
    ownership: {} as OwnershipChecks,
    leftBehind: { groupsNamed: async () => [group] },
  });
  return unowned.read(mockCredentials.user(), {
    cluster: 'prod',
    namespace: 'payments',
    statefulSet: 'ledger-db',
    leftBy: 'lineage',
  });
}

describe('UnownedOrphans, claims a deleted StatefulSet left', () => {
  it('serves those whose every recorded claimant is gone or re-created: no verified entity claims them, so they are the platform’s', async () => {
    const response = await read(
      ledgerGroup({ unverifiedClaimants: ['component:default/ledger'] }),
    );
    expect(response.leftBehind?.statefulSet.name).toBe('ledger-db');
    expect(response.leftBehind).not.toHaveProperty('recordedUids');
  });

  it('refuses those a verified claimant claims: they are on its card', async () => {
    await expect(read(ledgerGroup())).rejects.toThrow(NotAllowedError);
  });
});
