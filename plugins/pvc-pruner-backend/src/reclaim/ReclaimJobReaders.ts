import type {
  BackstageCredentials,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import {
  pvcPrunerFleetUnownedReadPermission,
  pvcPrunerOrphansReadPermission,
  type PruneJob,
} from 'backstage-plugin-pvc-pruner-common';
import { authorizeEntities } from '../permissions';

/**
 * Who may read a reclaim job: whoever may list its volumes, that is, a user
 * with `pvc-pruner.orphans.read` on every entity they were traced to, and
 * `pvc-pruner.fleet.unowned.read` when none was, or one was gone or
 * re-created. Not whoever may read the job's `entityRef`, which the caller
 * chose. One batch to the permission framework for all the jobs.
 */
export class ReclaimJobReaders {
  constructor(private readonly permissions: PermissionsService) {}

  async readable(
    credentials: BackstageCredentials,
    jobs: PruneJob[],
  ): Promise<boolean[]> {
    const reclaims = jobs.filter(j => j.kind === 'reclaim');
    if (reclaims.length === 0) return jobs.map(() => true);
    // A reclaim is a person's reading of people's volumes: no service reads one.
    if ((credentials.principal as { type?: string }).type !== 'user')
      return jobs.map(j => j.kind !== 'reclaim');
    const verifiedOf = (j: PruneJob) =>
      (j.tracedTo?.claimants ?? []).filter(
        r => !j.tracedTo?.unverified.includes(r),
      );
    const { allowed, basic } = await authorizeEntities({
      permissions: this.permissions,
      permission: pvcPrunerOrphansReadPermission,
      entityRefs: [...new Set(reclaims.flatMap(verifiedOf))],
      basic: [pvcPrunerFleetUnownedReadPermission],
      credentials,
    });
    const [unownedRead] = basic;
    return jobs.map(j => {
      if (j.kind !== 'reclaim') return true;
      const verified = verifiedOf(j);
      const platform =
        verified.length === 0 || (j.tracedTo?.unverified.length ?? 0) > 0;
      return verified.every(r => allowed.has(r)) && (!platform || unownedRead);
    });
  }
}
