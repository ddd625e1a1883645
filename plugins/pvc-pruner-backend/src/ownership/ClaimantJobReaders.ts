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

/** Whether the job is a prune whose readers its claimants decide (reclaims have their own). */
const judged = (job: PruneJob) =>
  job.kind !== 'reclaim' &&
  (job.claimants !== undefined || job.automaticRunId !== undefined);

/**
 * Who may read a prune: whoever may read every entity that claimed its
 * StatefulSet when it was authorized (`PruneJob.claimants`), as the card
 * shows a StatefulSet only to who may read each claimant. Read on the
 * entity it went through is not enough: any catalog author can co-claim
 * another team's StatefulSet, and the planner picks an automatic prune's
 * entity among the claimants. An automatic prune whose claimants are
 * unknown is read with `pvc-pruner.fleet.unowned.read` only; a person's
 * prune stored before claimants were recorded, and reclaims, are left to
 * the other checks. One batch for all the jobs.
 */
export class ClaimantJobReaders {
  constructor(private readonly permissions: PermissionsService) {}

  async readable(
    credentials: BackstageCredentials,
    jobs: PruneJob[],
  ): Promise<boolean[]> {
    const prunes = jobs.filter(judged);
    if (prunes.length === 0) return jobs.map(() => true);
    const { allowed, basic } = await authorizeEntities({
      permissions: this.permissions,
      permission: pvcPrunerOrphansReadPermission,
      entityRefs: [...new Set(prunes.flatMap(j => j.claimants ?? []))],
      basic: prunes.some(j => !j.claimants?.length)
        ? [pvcPrunerFleetUnownedReadPermission]
        : [],
      credentials,
    });
    const [unownedRead = false] = basic;
    return jobs.map(j => {
      if (!judged(j)) return true;
      if (!j.claimants?.length) return unownedRead;
      return j.claimants.every(r => allowed.has(r));
    });
  }
}
