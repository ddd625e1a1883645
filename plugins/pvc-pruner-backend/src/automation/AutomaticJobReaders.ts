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

const isAutomatic = (job: PruneJob) => job.automaticRunId !== undefined;

/**
 * Who may read an automatic prune: whoever may read every entity that
 * claimed its StatefulSet when it was authorized (`PruneJob.claimants`), as
 * the card shows a StatefulSet only to who may read each claimant. Read on
 * the entity it went through is not enough: the planner picks that entity
 * among the claimants, and a catalog author who co-claims another team's
 * StatefulSet and opts in may be the one picked. A job whose claimants are
 * unknown is read with `pvc-pruner.fleet.unowned.read` only. Jobs that are
 * not automatic are left to the other readers. One batch for all the jobs.
 */
export class AutomaticJobReaders {
  constructor(private readonly permissions: PermissionsService) {}

  async readable(
    credentials: BackstageCredentials,
    jobs: PruneJob[],
  ): Promise<boolean[]> {
    const automatic = jobs.filter(isAutomatic);
    if (automatic.length === 0) return jobs.map(() => true);
    const { allowed, basic } = await authorizeEntities({
      permissions: this.permissions,
      permission: pvcPrunerOrphansReadPermission,
      entityRefs: [...new Set(automatic.flatMap(j => j.claimants ?? []))],
      basic: automatic.some(j => !j.claimants?.length)
        ? [pvcPrunerFleetUnownedReadPermission]
        : [],
      credentials,
    });
    const [unownedRead = false] = basic;
    return jobs.map(j => {
      if (!isAutomatic(j)) return true;
      if (!j.claimants?.length) return unownedRead;
      return j.claimants.every(r => allowed.has(r));
    });
  }
}
