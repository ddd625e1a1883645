import { randomUUID } from 'node:crypto';
import { LoggerService } from '@backstage/backend-plugin-api';
import { InputError, NotAllowedError, NotFoundError } from '@backstage/errors';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import { PruneJob, PruneRequest } from 'backstage-plugin-pvc-pruner-common';
import { EntityWorkloadTarget } from '../orphans';
import { clusterFailure, KubeGateway, KubeGateways } from '../kubernetes';
import { LeaseLock } from './LeaseLock';
import { PruneResult, PruneRunner } from './PruneRunner';
import { PruneJobStore } from '../database';

/** Reports a job's outcome to whoever asked for it (the audit log). */
export interface JobOutcomeReporter {
  finished(job: PruneJob, result: PruneResult): void;
  crashed(job: PruneJob, error: Error): void;
}

export interface PruneJobsOptions {
  /** Live jobs are heartbeated this often; a job without a heartbeat for `staleAfterMs` is interrupted. */
  heartbeatMs: number;
  staleAfterMs: number;
  instanceId?: string;
}

/**
 * Starts prune jobs and keeps them honest: a job is stored before it is
 * acknowledged, runs in the background holding the StatefulSet's Lease, and a
 * job whose process died is marked interrupted, never left running forever.
 */
export class PruneJobs {
  private readonly running = new Map<string, Promise<void>>();
  private readonly instanceId: string;
  private timers: NodeJS.Timeout[] = [];
  private stopping = false;

  constructor(
    private readonly deps: {
      store: PruneJobStore;
      runner: PruneRunner;
      gateways: KubeGateways;
      lock: LeaseLock;
      logger: LoggerService;
    },
    private readonly options: PruneJobsOptions,
  ) {
    this.instanceId = options.instanceId ?? randomUUID();
  }

  /** Marks orphaned jobs interrupted now and from time to time; heartbeats this process's jobs. */
  async startHousekeeping() {
    await this.sweep();
    this.timers.push(
      setInterval(() => {
        void this.deps.store
          .heartbeat([...this.running.keys()], this.instanceId)
          .catch(e =>
            this.deps.logger.warn(`pvc-pruner: heartbeat failed: ${e}`),
          );
        void this.sweep();
      }, this.options.heartbeatMs),
    );
  }

  private async sweep() {
    try {
      const staleBefore = new Date(Date.now() - this.options.staleAfterMs);
      const interrupted = await this.deps.store.markInterrupted({
        staleBefore,
        reason:
          'The Backstage instance running this job stopped before it finished; check the StatefulSet and run a new scan',
      });
      for (const job of interrupted)
        this.deps.logger.warn(
          `pvc-pruner: job ${job.id} (${job.namespace}/${job.statefulSet}) was interrupted`,
        );
    } catch (e) {
      this.deps.logger.warn(
        `pvc-pruner: could not sweep interrupted jobs: ${e}`,
      );
    }
  }

  /** Stops housekeeping, and running jobs before their next delete (they end interrupted). */
  stop() {
    this.stopping = true;
    this.timers.forEach(clearInterval);
    this.timers = [];
  }

  /** Waits for this process's running jobs to finish. */
  async drain() {
    await Promise.allSettled(this.running.values());
  }

  /**
   * Validates that the StatefulSet is one the entity selects, takes its Lease
   * (a live holder is a 409 naming them), stores the job, and runs it. A
   * cluster that fails or refuses is a 503 naming it. `requestAuth` (the
   * user's tokens for client-side providers) lives in the running job's
   * memory only, never in the store.
   */
  async start(
    request: PruneRequest,
    target: EntityWorkloadTarget,
    requestedBy: string,
    reporter: JobOutcomeReporter,
    requestAuth: KubernetesRequestAuth = {},
  ): Promise<PruneJob> {
    const names = request.pvcs.map(p => p.name);
    if (new Set(names).size !== names.length)
      throw new InputError('pvcs lists the same claim more than once');
    if (target.cluster && target.cluster !== request.cluster) {
      throw new NotAllowedError(
        `Entity ${target.entityRef} maps to cluster "${target.cluster}", not "${request.cluster}"`,
      );
    }
    if (target.namespace && target.namespace !== request.namespace) {
      throw new NotAllowedError(
        `Entity ${target.entityRef} maps to namespace "${target.namespace}", not "${request.namespace}"`,
      );
    }
    const id = randomUUID();
    const { gateway, lease } = await this.lockStatefulSet(
      request,
      target,
      id,
      requestedBy,
      requestAuth,
    ).catch(e => {
      throw clusterFailure(e);
    });
    let job: PruneJob;
    try {
      job = await this.deps.store.createJob({
        id,
        entityRef: target.entityRef,
        cluster: request.cluster,
        namespace: request.namespace,
        statefulSet: request.statefulSet,
        dryRun: Boolean(request.dryRun),
        requestedBy,
        pvcs: request.pvcs,
      });
      await this.deps.store.claim(job.id, this.instanceId);
    } catch (e) {
      await lease.release().catch(() => undefined);
      throw e;
    }
    const run = this.deps.runner
      .run(job, gateway, lease, () => this.stopping)
      .then(result => reporter.finished(job, result))
      .catch(e => {
        this.deps.logger.error(`pvc-pruner: job ${job.id} crashed: ${e}`);
        reporter.crashed(job, e as Error);
      })
      .finally(() => this.running.delete(job.id));
    this.running.set(job.id, run);
    return job;
  }

  private async lockStatefulSet(
    request: PruneRequest,
    target: EntityWorkloadTarget,
    jobId: string,
    requestedBy: string,
    requestAuth: KubernetesRequestAuth,
  ) {
    let gateway: KubeGateway;
    try {
      gateway = await this.deps.gateways.for(request.cluster, requestAuth);
    } catch (e) {
      if (e instanceof NotFoundError)
        throw new InputError(`Unknown cluster "${request.cluster}"`);
      throw e;
    }
    const selected = await gateway.listStatefulSets(
      target.labelSelector,
      request.namespace,
    );
    if (!selected.some(s => s.metadata?.name === request.statefulSet)) {
      throw new NotAllowedError(
        `StatefulSet ${request.namespace}/${request.statefulSet} in cluster "${request.cluster}" is not one of ${target.entityRef}'s (selector ${target.labelSelector})`,
      );
    }
    const lease = await this.deps.lock.acquire(gateway, {
      namespace: request.namespace,
      statefulSet: request.statefulSet,
      jobId,
      requestedBy,
      dryRun: Boolean(request.dryRun),
    });
    return { gateway, lease };
  }
}
