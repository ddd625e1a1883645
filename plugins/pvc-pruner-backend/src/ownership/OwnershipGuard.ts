import type { V1StatefulSet } from '@kubernetes/client-node';
import type { DeleteGuard, DeleteGuardFactory } from '../jobs';
import { ClaimantIndex } from './ClaimantIndex';
import { listRefs, OwnershipChecks } from './OwnershipChecks';
import { WorkloadCatalog } from './WorkloadCatalog';

function refusing(reason: string): DeleteGuard {
  return {
    abortReason: reason,
    confirmLive: async () => {},
    stop: () => {},
  };
}

class OwnershipGuard implements DeleteGuard {
  private judged?: V1StatefulSet;
  private reason?: string;

  constructor(
    private readonly cluster: string,
    private readonly index: ClaimantIndex,
    private readonly authorized: ReadonlySet<string>,
    private readonly statefulSet: () => V1StatefulSet,
  ) {}

  get abortReason(): string | undefined {
    const sts = this.statefulSet();
    if (sts !== this.judged) {
      this.judged = sts;
      const added = this.index
        .claimantsOf(this.cluster, sts)
        .map(e => e.entityRef)
        .filter(ref => !this.authorized.has(ref));
      if (added.length > 0)
        this.reason ??= `StatefulSet ${sts.metadata?.namespace}/${
          sts.metadata?.name
        } is now also claimed by ${listRefs(
          added,
        )} (its labels changed during the job), on which this prune was not authorized`;
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
      const { claimants } = await this.checks.authorizePrune({
        credentials: request.credentials,
        target: request.target,
        cluster: job.cluster,
        statefulSet: statefulSet(),
        gateway,
        index,
      });
      return new OwnershipGuard(
        job.cluster,
        index,
        new Set(claimants),
        statefulSet,
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
