import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import {
  InputError,
  NotFoundError,
  ServiceUnavailableError,
} from '@backstage/errors';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import type {
  ClaimKeep,
  KeepClaimRequest,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import type { EntityWorkloadTarget, OrphanFinder } from '../orphans';
import { admitReadersOf, type OwnershipChecks } from '../ownership';
import type { ClaimKeepStore } from './ClaimKeepStore';

/** Who asks, for which entity, through which cluster tokens. */
export interface ClaimKeepCaller {
  target: EntityWorkloadTarget;
  credentials: BackstageCredentials;
  /** The user's tokens for clusters of client-side providers. */
  requestAuth: KubernetesRequestAuth;
}

/**
 * Keeps and unkeeps claims through the card, for a caller already allowed
 * `pvc-pruner.prune` on the entity: only claims of the entity's StatefulSets
 * as its orphans answer them now (an orphan, or a claim kept for another
 * reason), read as the caller may read them.
 */
export class ClaimKeepRequests {
  constructor(
    private readonly deps: {
      orphanFinder: Pick<OrphanFinder, 'findForEntity'>;
      ownership: Pick<OwnershipChecks, 'readable'>;
      keeps: Pick<ClaimKeepStore, 'keep' | 'unkeep'>;
    },
  ) {}

  async keep(
    caller: ClaimKeepCaller & { keptBy: string },
    request: KeepClaimRequest,
  ): Promise<ClaimKeep> {
    const reason = request.reason.trim();
    if (!reason) throw new InputError('Say why the claim is kept');
    const claims = await this.claimsOf(caller, request.cluster);
    const sts = claims.find(
      s => s.namespace === request.namespace && s.name === request.statefulSet,
    );
    if (!sts)
      throw new NotFoundError(
        `${caller.target.entityRef} has no StatefulSet ${request.namespace}/${request.statefulSet} in cluster ${request.cluster}`,
      );
    const claim = [...sts.orphans, ...sts.kept].find(
      c => c.name === request.claim.name,
    );
    if (!claim)
      throw new NotFoundError(
        `${request.claim.name} is not an orphaned or kept claim of StatefulSet ${request.namespace}/${request.statefulSet} in cluster ${request.cluster} (it is in use, or gone)`,
      );
    if (claim.uid !== request.claim.uid)
      throw new InputError(
        `${request.claim.name} was re-created since it was read (its uid is now ${claim.uid}); reload and keep it again`,
      );
    return this.deps.keeps.keep({
      cluster: request.cluster,
      namespace: request.namespace,
      claimName: claim.name,
      claimUid: claim.uid,
      entityRef: caller.target.entityRef,
      reason,
      until: request.until,
      keptBy: caller.keptBy,
    });
  }

  /**
   * Stops keeping the claim through the caller's entity only: a keep made
   * through another entity claiming the same StatefulSet stays, since its
   * owners asked for it.
   */
  async unkeep(
    caller: ClaimKeepCaller,
    where: { cluster: string; uid: string },
  ): Promise<void> {
    const entityRef = caller.target.entityRef;
    if (!(await this.deps.keeps.unkeep(where.cluster, where.uid, entityRef)))
      throw new NotFoundError(
        `The claim with uid ${where.uid} in cluster ${where.cluster} is not kept through ${entityRef}; a keep made through another entity can only be removed through that entity`,
      );
  }

  /** The entity's StatefulSets the caller may see in the cluster; a ServiceUnavailableError when the cluster cannot answer. */
  private async claimsOf(
    { target, credentials, requestAuth }: ClaimKeepCaller,
    cluster: string,
  ): Promise<StatefulSetOrphans[]> {
    const found = await this.deps.orphanFinder.findForEntity(
      target,
      requestAuth,
      admitReadersOf(this.deps.ownership, credentials, target),
    );
    const section = found.clusters.find(c => c.cluster === cluster);
    if (!section)
      throw new NotFoundError(
        `${target.entityRef} has no workloads in cluster ${cluster}`,
      );
    if (!section.ok) throw new ServiceUnavailableError(section.error.message);
    return section.statefulSets;
  }
}
