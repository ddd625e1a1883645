import type { V1StatefulSet } from '@kubernetes/client-node';
import { AUTO_PRUNE_ANNOTATION } from 'backstage-plugin-pvc-pruner-common';
import type { DeleteGuard, DeleteGuardFactory } from '../jobs';
import type { ClaimantIndex, WorkloadCatalog } from '../ownership';
import type { AutoPruneOptions } from './autoPruneOptions';
import { automationVerdict, entityAutoPrune } from './autoPruneVerdict';

/**
 * Why automatic pruning may not act on this StatefulSet for `onBehalfOf`,
 * judged on `index` (a fresh catalog read); or, when it may (every claimant
 * opted in, `onBehalfOf` among them), the grace as its annotation says it.
 */
export function automationRefusal(
  options: AutoPruneOptions,
  index: ClaimantIndex,
  cluster: string,
  statefulSet: V1StatefulSet,
  onBehalfOf: string,
): { reason: string } | { reason?: undefined; grace: string } {
  const namespace = statefulSet.metadata?.namespace ?? '';
  const claimants = index.claimantsOf(cluster, statefulSet);
  const self = claimants.find(c => c.entityRef === onBehalfOf);
  if (!self)
    return {
      reason: `${onBehalfOf} does not claim it (its Kubernetes annotations or the StatefulSet's labels changed, or it left the catalog)`,
    };
  const own = entityAutoPrune(self.entity, options);
  if (own.state !== 'opted-in')
    return {
      reason: `${onBehalfOf} is no longer opted in (${AUTO_PRUNE_ANNOTATION})`,
    };
  const verdict = automationVerdict(options, { cluster, namespace }, claimants);
  return verdict.automated ? { grace: own.value! } : { reason: verdict.reason };
}

const stopped = (statefulSet: V1StatefulSet, reason: string) =>
  `automatic pruning may no longer act on StatefulSet ${statefulSet.metadata?.namespace}/${statefulSet.metadata?.name}: ${reason}`;

function refusing(reason: string): DeleteGuard {
  return { abortReason: reason, confirmLive: async () => {}, stop: () => {} };
}

class AutomationGuard implements DeleteGuard {
  private judged?: { statefulSet: V1StatefulSet; index: ClaimantIndex };
  private reason?: string;

  constructor(
    private readonly options: AutoPruneOptions,
    private readonly workloads: Pick<WorkloadCatalog, 'fresh'>,
    private index: ClaimantIndex,
    private readonly cluster: string,
    private readonly onBehalfOf: string,
    private readonly statefulSet: () => V1StatefulSet,
  ) {}

  get abortReason(): string | undefined {
    const statefulSet = this.statefulSet();
    const { judged, index } = this;
    if (
      !this.reason &&
      (statefulSet !== judged?.statefulSet || index !== judged.index)
    ) {
      this.judged = { statefulSet, index };
      const { reason } = automationRefusal(
        this.options,
        index,
        this.cluster,
        statefulSet,
        this.onBehalfOf,
      );
      if (reason) this.reason = stopped(statefulSet, reason);
    }
    return this.reason;
  }

  /** The catalog read again with each live check: an opt-in withdrawn during the job stops it before its next delete. */
  async confirmLive(): Promise<void> {
    this.index = await this.workloads.fresh();
  }

  stop() {}
}

/**
 * The guard of an automatic prune. The plugin's own principal passes every
 * permission check, so what vouches for an automatic delete is the opt-in:
 * as the job starts, and again with each live check before a delete, the
 * catalog is read afresh, and whenever it or the StatefulSet (as last read
 * or watched) changed, the StatefulSet's claimants are judged again as the
 * run judged them: every one opted in, the entity acted for among them.
 * The job stops before its next delete once they are not.
 */
export class AutomaticPruneGuard implements DeleteGuardFactory {
  constructor(
    private readonly deps: {
      options: AutoPruneOptions;
      workloads: Pick<WorkloadCatalog, 'fresh'>;
    },
  ) {}

  async start(
    options: Parameters<DeleteGuardFactory['start']>[0],
  ): Promise<DeleteGuard> {
    const { job, statefulSet, request } = options;
    if (!request?.automatic)
      return refusing(
        'the automatic pruning guard was started for a job that is not an automatic prune',
      );
    let index: ClaimantIndex;
    try {
      index = await this.deps.workloads.fresh();
    } catch (e) {
      return refusing(
        `the catalog could not be read to confirm the opt-in: ${
          (e as Error).message
        }`,
      );
    }
    return new AutomationGuard(
      this.deps.options,
      this.deps.workloads,
      index,
      job.cluster,
      request.automatic.onBehalfOf,
      statefulSet,
    );
  }
}
