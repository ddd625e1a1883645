import type {
  BackstageCredentials,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import { InputError, NotAllowedError } from '@backstage/errors';
import {
  pvcPrunerFleetUnownedReadPermission,
  pvcPrunerUnownedPrunePermission,
  type PruneRequest,
} from 'backstage-plugin-pvc-pruner-common';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import type { JobAuthorization } from '../jobs';
import type { KubeGateway } from '../kubernetes';
import type { EntityWorkloadTarget } from '../orphans';
import {
  catalogUidOf,
  listRefs,
  OwnershipChecks,
  refusedReads,
  WorkloadCatalog,
} from '../ownership';
import { LeftBehindClaimantsGuard } from './LeftBehindClaimantsGuard';
import { DeletedStatefulSetGuard } from './DeletedStatefulSetGuard';
import { type FoundGroup, verifiedClaimants } from './leftBehindGroups';
import type { LeftBehindFinder } from './LeftBehindFinder';
import { deletedStatefulSet } from './leftBehindRule';

/**
 * The ownership rules for the claims of deleted StatefulSets: a group's
 * claimants are its recorded ones and every entity whose selector matches
 * its claims' labels, and the caller must hold `pvc-pruner.orphans.read`
 * on every one to see it and `pvc-pruner.prune` on every one to prune it,
 * as for a live StatefulSet (OwnershipChecks). A claimant added by a
 * selector only adds a check, and is looked for again before each delete
 * (LeftBehindClaimantsGuard). A recorded claimant whose entity is gone or
 * was re-created gives no right through its ref, and needs none on
 * whoever holds that ref now: seeing the group then needs
 * `pvc-pruner.fleet.unowned.read`, and pruning it
 * `pvc-pruner.unowned.prune` (as for a volume traced to such a claimant,
 * ReclaimPermissions). A prune is judged on a fresh catalog read, against
 * the uids the claimants were recorded with.
 */
export class LeftBehindAccess {
  constructor(
    private readonly deps: {
      permissions: PermissionsService;
      finder: Pick<LeftBehindFinder, 'groupsIn'>;
      ownership: Pick<OwnershipChecks, 'authorizePrune'>;
      /** The catalog a prune is authorized on (fresh), and a running job's claimants are found in again before each delete (warm). */
      workloads: Pick<WorkloadCatalog, 'warm' | 'fresh'>;
    },
  ) {}

  /** For each group, the claimants the caller may not read (one batch); `readable` are known to be readable. */
  async readable(
    credentials: BackstageCredentials,
    groups: FoundGroup[],
    readable: ReadonlySet<string> = new Set(),
  ): Promise<Array<{ refused: string[]; crowded: boolean }>> {
    const [refused, unownedRead] = await Promise.all([
      refusedReads(
        this.deps.permissions,
        credentials,
        groups.map(g => ({
          claimants: verifiedClaimants(g),
          crowded: g.crowded,
        })),
        readable,
      ),
      groups.some(g => g.unverifiedClaimants)
        ? this.allowed(pvcPrunerFleetUnownedReadPermission, credentials)
        : true,
    ]);
    return groups.map((g, i) => ({
      crowded: g.crowded,
      refused: unownedRead
        ? refused[i]
        : [...new Set([...refused[i], ...(g.unverifiedClaimants ?? [])])],
    }));
  }

  private async allowed(
    permission:
      | typeof pvcPrunerFleetUnownedReadPermission
      | typeof pvcPrunerUnownedPrunePermission,
    credentials: BackstageCredentials,
  ): Promise<boolean> {
    const [decision] = await this.deps.permissions.authorize([{ permission }], {
      credentials,
    });
    return decision.result === AuthorizeResult.ALLOW;
  }

  /**
   * Validates a prune of claims a deleted StatefulSet left (`leftBy`)
   * against a live read of the namespace, and authorizes it on the group's
   * claimants; throws InputError when the StatefulSet exists, a claim is
   * not one it left, or a `name-and-labels` claim's name was not typed.
   * Returns what the job prunes the claims of, and the claimants to keep
   * authorized.
   */
  async authorizePrune(options: {
    request: PruneRequest;
    target?: EntityWorkloadTarget;
    credentials: BackstageCredentials;
    gateway: KubeGateway;
  }): Promise<JobAuthorization> {
    const { request, target, credentials, gateway } = options;
    const leftBy = request.leftBy!;
    const where = `StatefulSet ${request.namespace}/${request.statefulSet}`;
    if (leftBy.evidence === 'lineage' && !leftBy.statefulSetUid)
      throw new InputError(
        'leftBy.statefulSetUid is required with evidence "lineage"',
      );
    if (leftBy.evidence === 'name-and-labels') {
      if (leftBy.statefulSetUid)
        throw new InputError(
          'leftBy.statefulSetUid is for evidence "lineage": nothing recorded a uid for these claims',
        );
      const typed = new Set(leftBy.typedNames ?? []);
      const untyped = request.pvcs.filter(p => !typed.has(p.name));
      if (untyped.length > 0)
        throw new InputError(
          `Only their names and labels say these claims were ${where}'s, so each must be confirmed by typing its name (leftBy.typedNames); not typed: ${untyped
            .slice(0, 5)
            .map(p => p.name)
            .join(', ')}${
            untyped.length > 5 ? ` and ${untyped.length - 5} more` : ''
          }`,
        );
    }
    const group = (
      await this.deps.finder.groupsIn(gateway, [request.namespace])
    ).find(
      g =>
        g.evidence === leftBy.evidence &&
        g.statefulSet.name === request.statefulSet &&
        (leftBy.evidence !== 'lineage' ||
          g.statefulSet.uid === leftBy.statefulSetUid),
    );
    if (!group)
      throw new InputError(
        `${where}${
          leftBy.statefulSetUid ? ` (uid ${leftBy.statefulSetUid})` : ''
        } left no claims that can be pruned: it exists, or none of its claims is left without a pod (reload the card)`,
      );
    const offered = new Map(group.report.orphans.map(o => [o.name, o.uid]));
    const foreign = request.pvcs.filter(p => offered.get(p.name) !== p.uid);
    if (foreign.length > 0)
      throw new InputError(
        `Not claims left by ${where}: ${foreign
          .slice(0, 5)
          .map(p => p.name)
          .join(', ')} (reload the card)`,
      );
    if (group.crowded)
      throw new NotAllowedError(
        `The claims left by ${where} have more claimants than pvc-pruner checks, or a recorded list that is not whole (${listRefs(
          group.claimants,
        )}): they are pruned by nobody through pvc-pruner`,
      );
    if (
      group.unverifiedClaimants &&
      !(await this.allowed(pvcPrunerUnownedPrunePermission, credentials))
    )
      throw new NotAllowedError(
        `You may not prune the claims left by ${where}: ${group.ownerNotice}`,
      );
    if (target && !group.claimants.includes(target.entityRef))
      throw new NotAllowedError(
        `${target.entityRef} is not a claimant of the claims left by ${where}`,
      );
    const index = await this.deps.workloads.fresh();
    const claimants = verifiedClaimants(group).map(ref => ({
      ref,
      uid: group.recordedUids?.[ref] ?? catalogUidOf(index, ref) ?? '',
    }));
    const deleted = deletedStatefulSet({
      namespace: request.namespace,
      name: request.statefulSet,
      uid: group.statefulSet.uid,
      templates: group.report.templates,
    });
    const { present } = await this.deps.ownership.authorizePrune({
      credentials,
      target,
      cluster: request.cluster,
      statefulSet: deleted,
      gateway,
      index,
      alsoClaimedBy: claimants,
    });
    return {
      claimants: present,
      subject: DeletedStatefulSetGuard.of(
        deleted,
        group.nameEvidence?.otherParses.map(p => p.statefulSet),
      ),
      alsoClaimedBy: claimants,
      guards: [
        LeftBehindClaimantsGuard.factory(
          { workloads: this.deps.workloads, ownership: this.deps.ownership },
          {
            credentials,
            target,
            cluster: request.cluster,
            deleted,
            claimUids: request.pvcs.map(p => p.uid),
            claimants,
          },
        ),
      ],
    };
  }
}
