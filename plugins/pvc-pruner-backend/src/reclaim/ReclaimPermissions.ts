import type {
  BackstageCredentials,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import {
  pvcPrunerFleetUnownedReadPermission,
  pvcPrunerOrphansReadPermission,
  pvcPrunerUnownedPrunePermission,
  pvcPrunerVolumesReclaimPermission,
} from 'backstage-plugin-pvc-pruner-common';
import { unverifiedOwnerReason } from '../lineage';
import { authorizeEntities } from '../permissions';
import { listRefs } from '../ownership';
import { MAX_CLAIMANTS } from '../ownership/ClaimantIndex';
import type { Attribution } from './VolumeAttribution';

/** What the caller may do with one traced volume. */
export interface VolumeVerdict {
  /** May see it: `pvc-pruner.orphans.read` on every claimant, or `pvc-pruner.fleet.unowned.read` when it has none. */
  readable: boolean;
  /** May reclaim it; otherwise `refusal` says why. */
  reclaimable: boolean;
  refusal?: string;
  /** What the caller should know even when allowed: a recorded owner that no longer stands behind its ref. */
  note?: string;
}

const crowdedReason = `its StatefulSet was claimed by more than ${MAX_CLAIMANTS} catalog entities: pvc-pruner takes that as an error in the catalog, and only a platform team with ${pvcPrunerUnownedPrunePermission.name} may reclaim it`;

/** The recorded claimants whose ref still names the entity that was recorded. */
const verifiedOf = (a: Attribution) =>
  a.claimants.filter(r => !a.unverified.includes(r));

/**
 * The ownership rules applied to Released volumes: a volume is its claim's
 * StatefulSet's, so reading it needs what reading that StatefulSet needs,
 * and reclaiming it needs `pvc-pruner.volumes.reclaim` on every entity
 * recorded as claiming it, and a recorded claimant whose entity is gone
 * or was re-created (VolumeAttribution's `unverified`) gives no right: it
 * adds the platform's permissions. One no entity can be traced to is the
 * platform's (`pvc-pruner.fleet.unowned.read`, `pvc-pruner.unowned.prune`).
 * One batch to the permission framework for all the volumes.
 */
export class ReclaimPermissions {
  constructor(private readonly permissions: PermissionsService) {}

  async judge(
    credentials: BackstageCredentials,
    attributions: Attribution[],
  ): Promise<VolumeVerdict[]> {
    const refs = [
      ...new Set(
        attributions.filter(a => !a.crowded).flatMap(a => verifiedOf(a)),
      ),
    ];
    const [read, reclaim] = await Promise.all([
      authorizeEntities({
        permissions: this.permissions,
        permission: pvcPrunerOrphansReadPermission,
        entityRefs: refs,
        basic: [pvcPrunerFleetUnownedReadPermission],
        credentials,
      }),
      authorizeEntities({
        permissions: this.permissions,
        permission: pvcPrunerVolumesReclaimPermission,
        entityRefs: refs,
        basic: [pvcPrunerUnownedPrunePermission],
        credentials,
      }),
    ]);
    const [unownedRead] = read.basic;
    const [unownedPrune] = reclaim.basic;
    return attributions.map(a => {
      // Whose it is cannot be known: the platform's, as a volume traced to nobody is.
      if (a.crowded)
        return {
          readable: unownedRead,
          reclaimable: unownedPrune,
          ...(unownedPrune
            ? { note: crowdedReason }
            : { refusal: crowdedReason }),
        };
      if (a.claimants.length === 0)
        return {
          readable: unownedRead,
          reclaimable: unownedPrune,
          ...(unownedPrune
            ? {}
            : {
                refusal: `no catalog entity can be traced to it: reclaiming it needs ${pvcPrunerUnownedPrunePermission.name}`,
              }),
        };
      const verified = verifiedOf(a);
      const unverified = a.unverified.length > 0;
      const platformReason = unverified
        ? unverifiedOwnerReason(a.unverified, 'reclaim')
        : undefined;
      const refused = verified.filter(r => !reclaim.allowed.has(r));
      const reclaimable = refused.length === 0 && (!unverified || unownedPrune);
      let refusal: string | undefined;
      if (unverified && !unownedPrune) refusal = platformReason;
      else if (refused.length > 0)
        refusal = `reclaiming it needs ${
          pvcPrunerVolumesReclaimPermission.name
        } on every entity its claim belonged to, and you lack it on ${listRefs(
          refused,
        )}`;
      return {
        readable:
          verified.every(r => read.allowed.has(r)) &&
          (!unverified || unownedRead),
        reclaimable,
        ...(refusal ? { refusal } : {}),
        ...(platformReason && !refusal ? { note: platformReason } : {}),
      };
    });
  }

  /** Throws NotAllowedError, naming the volume and why, unless the caller may reclaim every one. */
  async authorize(
    credentials: BackstageCredentials,
    volumes: Array<{ name: string; attribution: Attribution }>,
  ): Promise<void> {
    const verdicts = await this.judge(
      credentials,
      volumes.map(v => v.attribution),
    );
    verdicts.forEach((v, i) => {
      if (!v.reclaimable)
        throw new NotAllowedError(
          `You may not reclaim volume ${volumes[i].name}: ${v.refusal}`,
        );
    });
  }
}
