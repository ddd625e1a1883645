import type {
  BackstageCredentials,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import { InputError, NotAllowedError, NotFoundError } from '@backstage/errors';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import {
  LeftBehindEvidence,
  pvcPrunerFleetUnownedReadPermission,
  UnownedOrphansResponse,
} from 'backstage-plugin-pvc-pruner-common';
import type { LocatedCluster } from '../kubernetes';
import {
  isUnowned,
  LeftBehindFinder,
  verifiedClaimants,
  wireGroup,
} from '../leftBehind';
import { OrphanAnnotator, OrphanFinder } from '../orphans';
import { listRefs, OwnershipChecks } from '../ownership';
import { requireBasicPermission } from '../permissions';

/**
 * The orphans of one StatefulSet that no catalog entity claims, for the
 * fleet page's Unowned section to prune from: only for holders of
 * `pvc-pruner.fleet.unowned.read`, and only while no entity claims it (a
 * claimed one is read from its claimants' cards, under their permissions).
 */
export class UnownedOrphans {
  constructor(
    private readonly deps: {
      permissions: PermissionsService;
      orphanFinder: OrphanFinder;
      ownership: OwnershipChecks;
      annotator?: OrphanAnnotator;
      /** Finds the claims of deleted StatefulSets (`leftBy`). */
      leftBehind?: Pick<LeftBehindFinder, 'groupsNamed'>;
    },
  ) {}

  async read(
    credentials: BackstageCredentials,
    where: {
      cluster: string;
      namespace: string;
      statefulSet: string;
      /** The claims a deleted StatefulSet of that name left, known by this evidence. */
      leftBy?: LeftBehindEvidence;
    },
    requestAuth: KubernetesRequestAuth = {},
  ): Promise<UnownedOrphansResponse> {
    const { orphanFinder } = this.deps;
    await requireBasicPermission({
      permissions: this.deps.permissions,
      permission: pvcPrunerFleetUnownedReadPermission,
      credentials,
      why: 'Reading StatefulSets that no catalog entity claims',
    });
    const [details] = await orphanFinder.clustersOf({ cluster: where.cluster });
    if (!details) throw new InputError(`Unknown cluster "${where.cluster}"`);
    const what = `StatefulSet ${where.namespace}/${where.statefulSet} in cluster "${where.cluster}"`;
    if (where.leftBy)
      return this.leftBehind(
        details,
        { ...where, leftBy: where.leftBy },
        requestAuth,
      );
    const found = await orphanFinder.findStatefulSet(
      details,
      where.namespace,
      where.statefulSet,
      requestAuth,
    );
    if (!found) throw new NotFoundError(`${what} does not exist`);
    const claimants = await this.deps.ownership.claimantsOf({
      cluster: where.cluster,
      statefulSet: found.statefulSet,
    });
    if (claimants.length > 0)
      throw new NotAllowedError(
        `${what} is claimed by ${listRefs(
          claimants,
        )}: its claims are on the card of the entity it belongs to`,
      );
    const pricing = this.deps.annotator?.pricing([found.report]);
    return {
      cluster: where.cluster,
      statefulSet: found.report,
      ...(pricing ? { pricing } : {}),
      ...orphanFinder.snapshotSettings(),
    };
  }

  /** The claims a deleted StatefulSet left that no verified entity claims (recorded ones all gone or re-created, no selector matching). */
  private async leftBehind(
    details: LocatedCluster,
    where: {
      cluster: string;
      namespace: string;
      statefulSet: string;
      leftBy: LeftBehindEvidence;
    },
    requestAuth: KubernetesRequestAuth,
  ): Promise<UnownedOrphansResponse> {
    const what = `The deleted StatefulSet ${where.namespace}/${where.statefulSet} in cluster "${where.cluster}"`;
    const groups = (
      (await this.deps.leftBehind?.groupsNamed(details, requestAuth, where)) ??
      []
    ).filter(g => g.evidence === where.leftBy);
    const unclaimed = groups.find(isUnowned);
    if (!unclaimed) {
      const claimants = groups.flatMap(verifiedClaimants);
      if (claimants.length > 0)
        throw new NotAllowedError(
          `${what} left claims that ${listRefs(
            claimants,
          )} claim: they are on the card of the entity they belong to`,
        );
      throw new NotFoundError(
        `${what} left no claims that can be pruned (it exists again, or a pod uses them)`,
      );
    }
    const pricing = this.deps.annotator?.pricing([unclaimed.report]);
    return {
      cluster: where.cluster,
      statefulSet: unclaimed.report,
      leftBehind: wireGroup(unclaimed),
      ...(pricing ? { pricing } : {}),
      ...this.deps.orphanFinder.snapshotSettings(),
    };
  }
}
