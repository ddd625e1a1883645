import { pvcPrunerUnownedPrunePermission } from 'backstage-plugin-pvc-pruner-common';
import type { ClaimantIndex } from '../ownership/ClaimantIndex';
import type { ClaimLineage } from './ClaimLineageStore';

/**
 * The recorded claimants whose ref no longer stands for the entity that was
 * recorded: gone from the catalog's Kubernetes entities, registered again
 * under the same name (another uid), or recorded before uids were. Such a
 * ref gives nobody a right: whoever owns that name today did not claim it.
 */
export function unverifiedClaimants(
  lineage: Pick<ClaimLineage, 'claimants' | 'claimantUids'>,
  index: Pick<ClaimantIndex, 'get'>,
): string[] {
  return lineage.claimants.filter(ref => {
    const recorded = lineage.claimantUids[ref];
    return !recorded || index.get(ref)?.entity.metadata.uid !== recorded;
  });
}

/** Why claims or volumes with unverified recorded claimants are the platform's to act on. */
export function unverifiedOwnerReason(refs: string[], act: string): string {
  const named = refs.slice(0, 3).join(', ');
  const more = refs.length > 3 ? ` and ${refs.length - 3} more` : '';
  return `recorded owner ${named}${more} no longer exists (or was re-created); a platform team with ${pvcPrunerUnownedPrunePermission.name} may ${act} it`;
}
