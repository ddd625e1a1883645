import type { V1StatefulSet } from '@kubernetes/client-node';
import type { DeleteGuard, DeleteGuardFactory } from '../jobs';
import { ClaimantIndex } from './ClaimantIndex';
import {
  catalogUidOf,
  type ClaimantAtRequest,
  listRefs,
  OwnershipChecks,
} from './OwnershipChecks';
import { WorkloadCatalog } from './WorkloadCatalog';

function refusing(reason: string): DeleteGuard {
  return {
    abortReason: reason,
    confirmLive: async () => {},
    stop: () => {},
  };
}

/** The claimants of a StatefulSet by its labels, and those of `also` still in the catalog under their uid. */
function catalogClaimants(
  index: ClaimantIndex,
  cluster: string,
  sts: V1StatefulSet,
  also: readonly ClaimantAtRequest[],
): string[] {
  const refs = new Set(index.claimantsOf(cluster, sts).map(e => e.entityRef));
  for (const { ref, uid } of also)
    if (catalogUidOf(index, ref) === uid) refs.add(ref);
  return [...refs].sort();
}

/** The claimants of a StatefulSet by its labels, and every one of `also` (recorded), in the catalog or not. */
function claimantRefs(
  index: ClaimantIndex,
  cluster: string,
  sts: V1StatefulSet,
  also: readonly ClaimantAtRequest[],
): string[] {
  return [
    ...new Set([
      ...catalogClaimants(index, cluster, sts, also),
      ...also.map(c => c.ref),
    ]),
  ].sort();
}

class OwnershipGuard implements DeleteGuard {
  private judged?: V1StatefulSet;
  private reason?: string;

  constructor(
    private readonly cluster: string,
    private readonly index: ClaimantIndex,
    private readonly authorized: readonly string[],
    private readonly statefulSet: () => V1StatefulSet,
    private readonly alsoClaimedBy: readonly ClaimantAtRequest[] = [],
  ) {}

  get abortReason(): string | undefined {
    const sts = this.statefulSet();
    if (sts !== this.judged && !this.reason) {
      this.judged = sts;
      const now = claimantRefs(
        this.index,
        this.cluster,
        sts,
        this.alsoClaimedBy,
      );
      const added = now.filter(ref => !this.authorized.includes(ref));
      const gone = this.authorized.filter(ref => !now.includes(ref));
      if (added.length > 0 || gone.length > 0)
        this.reason = `the claimants of StatefulSet ${
          sts.metadata?.namespace
        }/${sts.metadata?.name} changed during the job (its labels changed): ${[
          ...(added.length ? [`now also ${listRefs(added)}`] : []),
          ...(gone.length ? [`no longer ${listRefs(gone)}`] : []),
        ].join('; ')}, so this prune is no longer the one authorized`;
    }
    return this.reason;
  }

  async confirmLive(): Promise<void> {
    // Nothing to read: the StatefulSet guard's live read is what it judges.
  }

  stop() {}
}

/**
 * A job's ownership check. When the job starts it reads the catalog afresh
 * and authorizes the prune again on every claimant, against the StatefulSet
 * as the job read it; before each delete it finds the claimants of the
 * StatefulSet as last read live (its labels decide) in that same catalog
 * read, and stops the job if one was not authorized. One catalog read per
 * job, so the last check's catalog state is at most the job's age old.
 */
export class OwnershipGuards implements DeleteGuardFactory {
  constructor(
    private readonly checks: OwnershipChecks,
    private readonly workloads: WorkloadCatalog,
  ) {}

  async start(
    options: Parameters<DeleteGuardFactory['start']>[0],
  ): Promise<DeleteGuard> {
    const { job, gateway, statefulSet, request } = options;
    if (!request)
      return refusing(
        'the job has no request to check who may prune this StatefulSet',
      );
    try {
      const index = await this.workloads.fresh();
      const { target } = request;
      const live = statefulSet();
      // In a read made after the job started, the entity must still claim the StatefulSet it went through.
      const alsoClaimedBy = request.alsoClaimedBy ?? [];
      if (
        target &&
        !catalogClaimants(index, job.cluster, live, alsoClaimedBy).includes(
          target.entityRef,
        )
      )
        return refusing(
          `${target.entityRef} no longer claims StatefulSet ${job.namespace}/${job.statefulSet} (its Kubernetes annotations or the StatefulSet's labels changed, or it left the catalog)`,
        );
      const { claimants } = await this.checks.authorizePrune({
        credentials: request.credentials,
        target,
        cluster: job.cluster,
        statefulSet: live,
        gateway,
        index,
        alsoClaimedBy,
      });
      return new OwnershipGuard(
        job.cluster,
        index,
        claimants,
        statefulSet,
        alsoClaimedBy,
      );
    } catch (e) {
      return refusing(
        `the ownership check when the job started refused it: ${
          (e as Error).message
        }`,
      );
    }
  }
}
