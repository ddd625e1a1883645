import { randomUUID } from 'node:crypto';
import type {
  BackstageCredentials,
  BackstageServicePrincipal,
  BackstageUserPrincipal,
  LoggerService,
} from '@backstage/backend-plugin-api';
import {
  InputError,
  NotFoundError,
  ServiceUnavailableError,
} from '@backstage/errors';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import type { V1StatefulSet } from '@kubernetes/client-node';
import { PruneJob, PruneRequest } from 'backstage-plugin-pvc-pruner-common';
import {
  assertWithinTarget,
  EntityWorkloadTarget,
  selectedStatefulSet,
} from '../orphans';
import { clusterFailure, KubeGateway, KubeGateways } from '../kubernetes';
import type { OwnershipChecks } from '../ownership';
import type { DeleteGuardFactory, JobRequest } from './DeleteGuard';
import { LeaseLock } from './LeaseLock';
import { PruneResult, PruneRunner } from './PruneRunner';
import { AutomaticJob, PruneJobStore } from '../database';
import { RunningJobLimits } from '../limits';

/** Reports a job's outcome to whoever asked for it (the audit log). */
export interface JobOutcomeReporter {
  finished(job: PruneJob, result: PruneResult): void;
  crashed(job: PruneJob, error: Error): void;
}

/** What a job's authorization leaves it to guard while it runs, and, for an automatic one, what it is stored as. */
export type JobAuthorization = Pick<
  JobRequest,
  'subject' | 'alsoClaimedBy' | 'guards'
> & {
  automatic?: AutomaticJob;
  /** The entities in the catalog that claimed the StatefulSet, whom the job's readers must be allowed to read (`PruneJob.claimants`). */
  claimants?: string[];
};

export interface PruneJobsOptions {
  /** This process's running jobs are heartbeated this often (in the database, which the sweep reads). */
  heartbeatMs: number;
  instanceId?: string;
  /** `pvcPruner.snapshots.enabled`: whether a prune may ask for snapshots. */
  snapshotsEnabled?: boolean;
}

/**
 * Starts prune jobs and keeps them honest: a job is stored before it is
 * acknowledged, runs in the background holding the StatefulSet's Lease, and
 * is heartbeated while it runs, so that if its process dies the
 * InterruptedJobSweeper marks it interrupted rather than leave it running.
 *
 * The heartbeat is not periodic upkeep for the scheduler: it must beat in the
 * very process that runs the job, for exactly as long as the job runs, at a
 * period tied to the staleness bound, and a missed beat has a meaning (the
 * job is taken for dead). So it is a timer that lives with the running jobs.
 */
export class PruneJobs {
  private readonly running = new Map<string, Promise<void>>();
  private readonly instanceId: string;
  private readonly stopping = new AbortController();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      store: PruneJobStore;
      runner: PruneRunner;
      gateways: KubeGateways;
      lock: LeaseLock;
      limits: RunningJobLimits;
      logger: LoggerService;
      /** Authorizes a prune on every claimant of its StatefulSet. */
      ownership: Pick<OwnershipChecks, 'authorizePrune'>;
      /** Validates and authorizes a prune of the claims a deleted StatefulSet left (`leftBy`). */
      leftBehind?: {
        authorizePrune(options: {
          request: PruneRequest;
          target?: EntityWorkloadTarget;
          credentials: BackstageCredentials;
          gateway: KubeGateway;
        }): Promise<JobAuthorization>;
      };
    },
    private readonly options: PruneJobsOptions,
  ) {
    this.instanceId = options.instanceId ?? randomUUID();
  }

  private beat() {
    void this.deps.store
      .heartbeat([...this.running.keys()], this.instanceId)
      .catch(e => this.deps.logger.warn(`pvc-pruner: heartbeat failed: ${e}`));
  }

  /** Runs the heartbeat while this process runs at least one job. */
  private track(jobId: string, run: Promise<void>) {
    this.running.set(jobId, run);
    this.heartbeat ??= setInterval(() => this.beat(), this.options.heartbeatMs);
    void run.finally(() => {
      this.running.delete(jobId);
      if (this.running.size === 0) {
        clearInterval(this.heartbeat);
        this.heartbeat = undefined;
      }
    });
  }

  /**
   * For the shutdown hook: refuses new jobs, tells running ones to stop
   * before their next delete, and waits until they have: each records itself
   * interrupted with the reason and releases its Lease.
   */
  async shutdown(): Promise<void> {
    this.stopping.abort();
    while (this.running.size > 0)
      await Promise.allSettled([...this.running.values()]);
  }

  /**
   * Validates that the StatefulSet is one the entity selects (or, without
   * an entity, that it exists), that neither the user nor the StatefulSet
   * runs too many jobs already (a 429 naming the limit), has ownership
   * authorize the prune on every claimant, takes its Lease (a live holder is
   * a 409 naming them), stores the job, and runs it. A cluster that fails or
   * refuses is a 503 naming it. `requestAuth` (the user's tokens for
   * client-side providers) and the credentials live in the running job's
   * memory only, never in the store.
   */
  async start(options: {
    request: PruneRequest;
    /** The entity the prune goes through; none for a StatefulSet no entity claims. */
    target?: EntityWorkloadTarget;
    /** Only users prune. */
    credentials: BackstageCredentials<BackstageUserPrincipal>;
    reporter: JobOutcomeReporter;
    requestAuth?: KubernetesRequestAuth;
  }): Promise<PruneJob> {
    const { request, target, credentials } = options;
    return this.launch({
      ...options,
      requestedBy: credentials.principal.userEntityRef,
      authorize: gateway =>
        this.authorize(request, target, credentials, gateway),
    });
  }

  /**
   * Starts a prune the plugin asked for itself, on behalf of `target` (an
   * automatic one), as `start` does, but authorized by `authorize` instead
   * of the permission framework (where the plugin's own principal may do
   * anything): it is given the StatefulSet `target` selects, read live, and
   * says what the job then guards and what it is stored as. Never of a
   * deleted StatefulSet's claims.
   */
  async startAutomatic(options: {
    request: PruneRequest;
    target: EntityWorkloadTarget;
    credentials: BackstageCredentials<BackstageServicePrincipal>;
    authorize: (
      statefulSet: V1StatefulSet,
      gateway: KubeGateway,
    ) => Promise<{
      guards: DeleteGuardFactory[];
      automatic: AutomaticJob;
      claimants: string[];
    }>;
    reporter: JobOutcomeReporter;
  }): Promise<PruneJob> {
    const { request, target, credentials } = options;
    if (request.leftBy)
      throw new InputError(
        'An automatic prune never prunes the claims of a deleted StatefulSet (leftBy)',
      );
    return this.launch({
      ...options,
      requestedBy: credentials.principal.subject,
      authorize: async gateway =>
        options.authorize(
          await selectedStatefulSet(gateway, request, target),
          gateway,
        ),
    });
  }

  /** What `start` and `startAutomatic` share: all but who asks and how that is authorized. */
  private async launch(options: {
    request: PruneRequest;
    target?: EntityWorkloadTarget;
    credentials: BackstageCredentials;
    requestedBy: string;
    authorize: (gateway: KubeGateway) => Promise<JobAuthorization>;
    reporter: JobOutcomeReporter;
    requestAuth?: KubernetesRequestAuth;
  }): Promise<PruneJob> {
    const { request, target, credentials, reporter, requestedBy } = options;
    const requestAuth = options.requestAuth ?? {};
    const names = request.pvcs.map(p => p.name);
    if (new Set(names).size !== names.length)
      throw new InputError('pvcs lists the same claim more than once');
    if (request.snapshot && !this.options.snapshotsEnabled)
      throw new InputError(
        'snapshot: true asks for a VolumeSnapshot of each claim, but snapshots are off on this Backstage instance (pvcPruner.snapshots.enabled); prune without snapshot, or ask the platform team to enable them',
      );
    assertWithinTarget(target, request);
    const scope = {
      requestedBy,
      cluster: request.cluster,
      namespace: request.namespace,
      statefulSet: request.statefulSet,
    };
    // Refused before the cluster is asked anything.
    await this.deps.limits.ensureRoom(scope);
    const id = randomUUID();
    const { gateway, lease, subject } = await this.lockStatefulSet(
      request,
      options.authorize,
      { jobId: id, requestedBy },
      requestAuth,
    ).catch(e => {
      throw clusterFailure(e);
    });
    let job: PruneJob;
    try {
      job = await this.deps.limits.admit(
        scope,
        () =>
          this.deps.store.createJob({
            id,
            entityRef: target?.entityRef,
            cluster: request.cluster,
            namespace: request.namespace,
            statefulSet: request.statefulSet,
            dryRun: Boolean(request.dryRun),
            requestedBy,
            pvcs: request.pvcs,
            automatic: subject.automatic,
            claimants: subject.claimants,
          }),
        stored => this.deps.store.deleteJob(stored.id),
      );
      await this.deps.store.claim(job.id, this.instanceId);
    } catch (e) {
      await lease.release().catch(() => undefined);
      throw e;
    }
    const run = this.deps.runner
      .run(job, gateway, lease, this.stopping.signal, {
        credentials,
        target,
        snapshot: Boolean(request.snapshot),
        ...subject,
      })
      .then(result => reporter.finished(job, result))
      .catch(e => {
        this.deps.logger.error(`pvc-pruner: job ${job.id} crashed: ${e}`);
        reporter.crashed(job, e as Error);
      });
    this.track(job.id, run);
    return job;
  }

  /**
   * Runs a job of another concern (a reclaim), stored and holding its Lease,
   * as prunes run: claimed by this instance, heartbeated while it runs, and
   * told through `stop` when the instance shuts down. A ServiceUnavailableError
   * once shutdown has begun.
   */
  async adopt(
    jobId: string,
    run: (stop: AbortSignal) => Promise<void>,
  ): Promise<void> {
    if (this.stopping.signal.aborted)
      throw new ServiceUnavailableError(
        'This Backstage instance is shutting down; try again in a moment',
      );
    await this.deps.store.claim(jobId, this.instanceId);
    this.track(jobId, run(this.stopping.signal));
  }

  private async lockStatefulSet(
    request: PruneRequest,
    authorize: (gateway: KubeGateway) => Promise<JobAuthorization>,
    holder: { jobId: string; requestedBy: string },
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
    if (this.stopping.signal.aborted)
      throw new ServiceUnavailableError(
        'This Backstage instance is shutting down; try again in a moment',
      );
    const subject = await authorize(gateway);
    const lease = await this.deps.lock.acquire(gateway, {
      namespace: request.namespace,
      statefulSet: request.statefulSet,
      jobId: holder.jobId,
      requestedBy: holder.requestedBy,
      dryRun: Boolean(request.dryRun),
    });
    return { gateway, lease, subject };
  }

  /** Authorizes the prune on the claimants of a live StatefulSet, or of a deleted one's claims (`leftBy`). */
  private async authorize(
    request: PruneRequest,
    target: EntityWorkloadTarget | undefined,
    credentials: BackstageCredentials,
    gateway: KubeGateway,
  ): Promise<JobAuthorization> {
    if (request.leftBy) {
      if (!this.deps.leftBehind)
        throw new InputError(
          'Pruning the claims of deleted StatefulSets is not available here',
        );
      return this.deps.leftBehind.authorizePrune({
        request,
        target,
        credentials,
        gateway,
      });
    }
    const statefulSet = await selectedStatefulSet(gateway, request, target);
    const { present } = await this.deps.ownership.authorizePrune({
      credentials,
      target,
      cluster: request.cluster,
      statefulSet,
      gateway,
    });
    return { claimants: present };
  }
}
