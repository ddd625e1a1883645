import type {
  V1StatefulSet,
  V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import type { PruneJob } from 'backstage-plugin-pvc-pruner-common';
import type { KubeGateway } from '../kubernetes';
import { AutoscalerGuard } from '../autoscaling';
import type { PausedStatefulSets } from '../orphans';
import {
  DeleteGuard,
  DeleteGuardFactory,
  JobRequest,
  SubjectGuard,
  SubjectGuardFactory,
} from './DeleteGuard';
import { StatefulSetGuard } from './StatefulSetGuard';

/** The live StatefulSet of the job's name: what a job prunes the claims of unless its request says otherwise. */
const liveStatefulSet: SubjectGuardFactory = {
  start: (gateway, namespace, name) =>
    StatefulSetGuard.start(gateway, namespace, name),
};

/**
 * Everything a running job guards: its StatefulSet and the autoscalers that
 * target it (whose state the orphan rule judges by), and the guards of
 * other concerns (ownership, …), asked together: the first reason to stop
 * wins, and their live reads go out in one round trip.
 */
export class JobGuards {
  private constructor(
    private readonly statefulSetGuard: SubjectGuard,
    private readonly autoscalerGuard: AutoscalerGuard,
    private readonly others: DeleteGuard[],
  ) {}

  static async start(
    job: PruneJob,
    gateway: KubeGateway,
    factories: DeleteGuardFactory[],
    request: JobRequest | undefined,
  ): Promise<JobGuards> {
    const sts = await (request?.subject ?? liveStatefulSet).start(
      gateway,
      job.namespace,
      job.statefulSet,
    );
    let autoscalers: AutoscalerGuard;
    try {
      autoscalers = await AutoscalerGuard.start(
        gateway,
        job.namespace,
        job.statefulSet,
      );
    } catch (e) {
      sts.stop();
      throw e;
    }
    const others: DeleteGuard[] = [];
    try {
      for (const factory of factories)
        others.push(
          await factory.start({
            job,
            gateway,
            statefulSet: () => sts.current,
            request,
          }),
        );
    } catch (e) {
      sts.stop();
      autoscalers.stop();
      others.forEach(g => g.stop());
      throw e;
    }
    return new JobGuards(sts, autoscalers, others);
  }

  /** The StatefulSet as last read or watched. */
  get statefulSet(): V1StatefulSet {
    return this.statefulSetGuard.current;
  }

  /** How the orphan rule takes the StatefulSet's 0 replicas, when its guard says (a deleted one is never scaled up). */
  get pausedStatefulSets(): PausedStatefulSets | undefined {
    return this.statefulSetGuard.pausedStatefulSets;
  }

  /** The HorizontalPodAutoscalers that target the StatefulSet, as last listed or watched. */
  get autoscalers(): V2HorizontalPodAutoscaler[] {
    return this.autoscalerGuard.autoscalers;
  }

  get abortReason(): string | undefined {
    return (
      this.statefulSetGuard.abortReason ??
      this.autoscalerGuard.abortReason ??
      this.others.find(g => g.abortReason)?.abortReason
    );
  }

  async confirmLive(gateway: KubeGateway): Promise<void> {
    await Promise.all([
      this.statefulSetGuard.confirmLive(gateway),
      this.autoscalerGuard.confirmLive(gateway),
      ...this.others.map(g => g.confirmLive(gateway)),
    ]);
  }

  stop() {
    this.statefulSetGuard.stop();
    this.autoscalerGuard.stop();
    this.others.forEach(g => g.stop());
  }
}
