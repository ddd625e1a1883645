import type {
  AuditorService,
  AuditorServiceEvent,
  AuthService,
  LoggerService,
} from '@backstage/backend-plugin-api';
import { InputError, NotAllowedError } from '@backstage/errors';
import type { V1StatefulSet } from '@kubernetes/client-node';
import type {
  PruneJob,
  PruneRequest,
} from 'backstage-plugin-pvc-pruner-common';
import type { KubeGateway } from '../kubernetes';
import {
  auditedOutcome,
  DeleteGuardFactory,
  JobOutcomeReporter,
  PruneJobs,
} from '../jobs';
import type {
  NamespaceOwners,
  WorkloadCatalog,
  WorkloadEntity,
} from '../ownership';
import type { AutoPruneOptions } from './autoPruneOptions';
import { automationRefusal } from './AutomaticPruneGuard';
import { unmarkUndeleted } from './KeepSteps';
import type { AutomaticPrunes, ClaimKeeps } from './types';

/** What the audit record, the history and the card say of an automatic prune. */
export const AUTOMATIC_REASON =
  "automatic, per the entity's auto-prune annotation";

/**
 * Starts automatic prunes (and their dry runs) through the same PruneJobs
 * path as a person's: the plugin's own service principal asks, on behalf of
 * an entity. The permission framework allows that principal everything, so
 * it is not what authorizes them: a fresh catalog read must show every
 * claimant of the live StatefulSet opted in, the entity among them, within
 * `pvcPruner.autoPrune`'s clusters and namespaces, and the namespace binding
 * holds as for people. The job then runs with the automatic guard (the
 * opt-in again before each delete), its keeps honoured at the delete, and
 * with snapshots whenever they are enabled.
 */
export class AutomaticPruneJobs implements AutomaticPrunes {
  constructor(
    private readonly deps: {
      jobs: Pick<PruneJobs, 'startAutomatic'>;
      auth: Pick<AuthService, 'getOwnServiceCredentials'>;
      auditor: AuditorService;
      logger: LoggerService;
      workloads: Pick<WorkloadCatalog, 'fresh'>;
      namespaceOwners: Pick<NamespaceOwners, 'check'>;
      /** The card keeps, whose deleting marks a job lifts from the claims it did not delete. */
      keeps: ClaimKeeps;
      /** The automatic guard (AutomaticPruneGuard), started with each job. */
      guard: DeleteGuardFactory;
      options: AutoPruneOptions;
      /** `pvcPruner.snapshots.enabled`: then every automatic prune snapshots its claims first. */
      snapshotsEnabled: boolean;
    },
  ) {}

  async start(options: {
    request: PruneRequest;
    onBehalfOf: WorkloadEntity;
    runId: string;
  }): Promise<PruneJob> {
    const { onBehalfOf, runId } = options;
    if (!/^[\w.-]{1,64}$/.test(runId))
      throw new InputError(
        `An automatic prune's run id must be 1 to 64 letters, digits, dots, dashes or underscores, got "${runId.slice(
          0,
          100,
        )}"`,
      );
    const request: PruneRequest = {
      ...options.request,
      entityRef: onBehalfOf.entityRef,
      snapshot: this.deps.snapshotsEnabled,
    };
    const credentials = await this.deps.auth.getOwnServiceCredentials();
    const audit = await this.deps.auditor.createEvent({
      eventId: 'prune',
      severityLevel: 'high',
      meta: {
        actor: credentials.principal.subject,
        automatic: true,
        onBehalfOf: onBehalfOf.entityRef,
        runId,
        reason: AUTOMATIC_REASON,
        entityRef: onBehalfOf.entityRef,
        cluster: request.cluster,
        namespace: request.namespace,
        statefulSet: request.statefulSet,
        pvcs: request.pvcs.map(p => p.name),
        dryRun: Boolean(request.dryRun),
        snapshot: Boolean(request.snapshot),
      },
    });
    try {
      return await this.deps.jobs.startAutomatic({
        request,
        target: onBehalfOf,
        credentials,
        authorize: (statefulSet, gateway) =>
          this.authorize(request, onBehalfOf.entityRef, runId, {
            statefulSet,
            gateway,
          }),
        reporter: this.reporter(audit),
      });
    } catch (error) {
      await audit.fail({ error: error as Error });
      throw error;
    }
  }

  /** The audit's outcome, and the claims the job did not delete unmarked. */
  private reporter(audit: AuditorServiceEvent): JobOutcomeReporter {
    const audited = auditedOutcome(audit);
    return {
      finished: (job, result) => {
        audited.finished(job, result);
        unmarkUndeleted(this.deps.keeps, job, result.summary).catch(e =>
          this.deps.logger.warn(
            `pvc-pruner: the claims automatic prune ${job.id} did not delete could not be unmarked, so they cannot be kept through the card: ${e}`,
          ),
        );
      },
      // Whether it deleted them is unknown: they stay marked.
      crashed: audited.crashed,
    };
  }

  private async authorize(
    request: PruneRequest,
    onBehalfOf: string,
    runId: string,
    live: { statefulSet: V1StatefulSet; gateway: KubeGateway },
  ) {
    const { cluster, namespace, statefulSet: name } = request;
    const index = await this.deps.workloads.fresh();
    const judged = automationRefusal(
      this.deps.options,
      index,
      cluster,
      live.statefulSet,
      onBehalfOf,
    );
    if (judged.reason !== undefined)
      throw new NotAllowedError(
        `Automatic pruning may not act on StatefulSet ${namespace}/${name} in cluster "${cluster}": ${judged.reason}`,
      );
    const claimants = index.claimantsOf(cluster, live.statefulSet);
    await this.deps.namespaceOwners.check(live.gateway, namespace, claimants);
    return {
      guards: [this.deps.guard],
      automatic: {
        onBehalfOf,
        runId,
        grace: judged.grace,
      },
      claimants: claimants.map(c => c.entityRef).sort(),
    };
  }
}
