import {
  AuditorService,
  LoggerService,
  SchedulerService,
} from '@backstage/backend-plugin-api';
import type { PruneJob, PvcOutcome } from 'backstage-plugin-pvc-pruner-common';
import type { AutoPruneOptions } from './autoPruneOptions';
import {
  AutoPruneOutcome,
  AutoPruneRunResult,
  AutoPruneRunStore,
  firstRunAtOrAfter,
} from './AutoPruneRunStore';
import {
  AutoPruneNotifier,
  noticeScope,
  totalBytes,
} from './AutoPruneNotifier';
import { isKeepReason } from './describeKeep';
import type {
  AutomaticPrunes,
  AutoPrunePlanning,
  PlannedClaim,
  PlannedGroup,
} from './types';

export const AUTO_PRUNE_TASK_ID = 'pvc-pruner-auto-prune';

const FINAL = new Set([
  'succeeded',
  'incomplete',
  'failed',
  'aborted',
  'interrupted',
]);
const GIB = 2 ** 30;

/** How the task follows the jobs it starts. */
export interface JobWaitOptions {
  /** Between two reads of a running job; 2 s unless told. */
  pollMs?: number;
  /** The longest a job is waited for; 15 minutes unless told. */
  jobDeadlineMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) =>
  new Promise<void>(resolve => setTimeout(resolve, ms));

const byEligibleAt = (a: PlannedClaim, b: PlannedClaim) =>
  a.eligibleAt.localeCompare(b.eligibleAt) || a.ordinal - b.ordinal;

const place = (g: PlannedGroup) =>
  `${g.cluster}/${g.namespace}/${g.statefulSet}`;

/**
 * The claims the dry run held back, when that is all that kept it from
 * succeeding: it ended `incomplete` with nothing failed or terminating,
 * and it confirmed the others, or held back only claims kept after
 * planning. They are reported as kept, with why, and the rest pruned: one
 * claim that cannot be (no VolumeSnapshotClass, say) must not hold back its
 * siblings run after run.
 */
function keptAtDryRun(job: PruneJob): PvcOutcome[] {
  const { skipped, failed, terminating, deleted } = job.summary;
  if (job.status !== 'incomplete' || failed.length + terminating.length > 0)
    return [];
  return skipped.length > 0 &&
    (deleted.length > 0 || skipped.every(c => isKeepReason(c.reason)))
    ? skipped
    : [];
}

/** Why a dry run did not confirm the claims: its reason, or its claims' reasons. */
function dryRunProblem(job: PruneJob, kept: PvcOutcome[]): string | undefined {
  if (kept.length > 0) return undefined;
  // Each claim's own reason: "5 claims could not be deleted" alone tells the owners nothing to fix.
  const reasons = [...job.summary.failed, ...job.summary.skipped].map(
    c => `${c.name}: ${c.reason ?? 'skipped'}`,
  );
  const why = reasons.length ? ` (${reasons.slice(0, 5).join('; ')})` : '';
  if (job.status !== 'succeeded')
    return `${job.reason ?? `the dry run ended ${job.status}`}${why}`;
  if (job.summary.deleted.length === 0)
    return `it confirmed none of the claims${why}`;
  return undefined;
}

/** The run's counts as they grow. */
class RunTally {
  considered = 0;
  eligible = 0;
  kept = 0;
  deleted = 0;
  bytesDeleted = 0;
  statefulSets = 0;
  dryRunFailures = 0;
  claimsTaken = 0;
  bytesTaken = 0;
  stoppedBecause?: string;
  readonly outcomes: AutoPruneOutcome[] = [];

  /** Counts the claims against the run's limits. */
  take(claims: PlannedClaim[]) {
    this.claimsTaken += claims.length;
    this.bytesTaken += totalBytes(claims);
  }

  /** Gives back the limits of claims taken and then not pruned, so that they cannot starve the others. */
  giveBack(claims: PlannedClaim[]) {
    this.claimsTaken -= claims.length;
    this.bytesTaken -= totalBytes(claims);
  }
}

/**
 * The scheduled automatic run: plans from the caches, tells owners of
 * claims about to become eligible (once per scope), then, group by group,
 * oldest eligible first and within `maxClaimsPerRun`/`maxBytesPerRun`,
 * a dry run and, when it succeeded, the real prune of the claims it
 * confirmed, through the same jobs as a person's prune; then tells the
 * owners what happened. One group's failure never stops the others. A
 * global task: one run at a time across replicas.
 */
export class AutoPruneTask {
  private readonly pollMs: number;
  private readonly jobDeadlineMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private runSignal?: AbortSignal;

  constructor(
    private readonly deps: {
      options: AutoPruneOptions;
      planning: AutoPrunePlanning;
      prunes: AutomaticPrunes;
      jobs: { getJob(id: string): Promise<PruneJob | undefined> };
      runs: Pick<
        AutoPruneRunStore,
        'startRun' | 'finishRun' | 'noticeSent' | 'recordNotice'
      >;
      notifier: Pick<
        AutoPruneNotifier,
        'available' | 'before' | 'after' | 'dryRunFailed'
      >;
      logger: LoggerService;
      auditor?: AuditorService;
      currency?: string;
      /** Why pruning is disabled (the prune gate): then owners could not keep claims through the card, and nothing is pruned automatically. */
      pruneDisabledReason?: string;
    },
    wait: JobWaitOptions = {},
  ) {
    this.pollMs = wait.pollMs ?? 2000;
    this.jobDeadlineMs = wait.jobDeadlineMs ?? 15 * 60_000;
    this.sleep = wait.sleep ?? defaultSleep;
  }

  /** Schedules the run when `pvcPruner.autoPrune.enabled` and pruning is not disabled; answers whether it did. */
  async schedule(scheduler: SchedulerService): Promise<boolean> {
    const { options, pruneDisabledReason } = this.deps;
    if (!options.enabled) return false;
    if (pruneDisabledReason) {
      this.deps.logger.warn(
        `pvc-pruner: automatic pruning is enabled but not scheduled: ${pruneDisabledReason}`,
      );
      return false;
    }
    await scheduler.scheduleTask({
      id: AUTO_PRUNE_TASK_ID,
      scope: 'global',
      ...options.schedule,
      fn: signal => this.run(signal).then(() => undefined),
    });
    return true;
  }

  /** One run, recorded from start to end; answers its summary. */
  async run(signal?: AbortSignal): Promise<AutoPruneRunResult> {
    const { runs, logger } = this.deps;
    // One run at a time per process (the scheduler's global lock); its waits read it.
    this.runSignal = signal;
    const run = await runs.startRun();
    const tally = new RunTally();
    let result: AutoPruneRunResult;
    try {
      result = await this.work(run.id, new Date(run.startedAt), tally, signal);
    } catch (e) {
      result = {
        ...this.counts(tally),
        status: 'failed',
        stoppedBecause: `the run failed: ${e}`,
      };
    }
    await runs.finishRun(run.id, result);
    logger.info(
      `pvc-pruner: automatic run ${run.id} ${result.status}: ${
        result.considered
      } orphans considered, ${result.eligible} eligible, ${
        result.deleted
      } deleted (${(result.bytesDeleted / GIB).toFixed(1)} GiB) in ${
        result.statefulSets
      } StatefulSets, ${result.kept} kept, ${
        result.dryRunFailures
      } failed dry runs${
        result.stoppedBecause ? `; ${result.stoppedBecause}` : ''
      }`,
    );
    await this.audit(run.id, result);
    return result;
  }

  private counts(tally: RunTally): AutoPruneRunResult {
    return {
      status: 'finished',
      considered: tally.considered,
      eligible: tally.eligible,
      deleted: tally.deleted,
      kept: tally.kept,
      bytesDeleted: tally.bytesDeleted,
      statefulSets: tally.statefulSets,
      dryRunFailures: tally.dryRunFailures,
      outcomes: tally.outcomes,
    };
  }

  private async work(
    runId: string,
    startedAt: Date,
    tally: RunTally,
    signal?: AbortSignal,
  ): Promise<AutoPruneRunResult> {
    const { options, notifier, planning, pruneDisabledReason } = this.deps;
    if (pruneDisabledReason)
      return {
        ...this.counts(tally),
        status: 'refused',
        stoppedBecause: `owners could not keep claims through the card: ${pruneDisabledReason}`,
      };
    if (options.requireNotifications && !(await notifier.available()))
      return {
        ...this.counts(tally),
        status: 'refused',
        stoppedBecause:
          'pvcPruner.autoPrune.requireNotifications is true, and the notifications backend is not installed: owners could not be told',
      };
    const plan = await planning.plan();
    tally.considered = plan.considered;
    for (const failed of plan.clustersFailed)
      this.deps.logger.warn(
        `pvc-pruner: automatic run ${runId} prunes nothing in cluster ${failed.cluster} this time: ${failed.error}`,
      );
    for (const group of plan.groups) {
      tally.eligible += group.eligible.length;
      tally.kept += group.kept.length;
    }
    for (const group of plan.groups)
      await this.tellBefore(group, startedAt).catch(e =>
        this.deps.logger.warn(
          `pvc-pruner: automatic run ${runId}: no before-notice for ${place(
            group,
          )}: ${e}`,
        ),
      );
    const groups = plan.groups
      .filter(g => g.eligible.length > 0)
      .map(g => ({ group: g, eligible: [...g.eligible].sort(byEligibleAt) }))
      .sort(
        (a, b) =>
          byEligibleAt(a.eligible[0], b.eligible[0]) ||
          place(a.group).localeCompare(place(b.group)),
      );
    for (const { group, eligible } of groups) {
      if (signal?.aborted) {
        tally.stoppedBecause = 'the run reached its timeout';
        break;
      }
      const taken = this.takeWithinLimits(group, eligible, tally);
      if (taken.length > 0) {
        const deferred = eligible.slice(taken.length);
        await this.pruneGroup(runId, group, taken, deferred, tally).catch(e => {
          tally.outcomes.push({
            ...this.where(group),
            outcome: 'error',
            reason: String(e),
          });
          this.deps.logger.warn(
            `pvc-pruner: automatic run ${runId}: ${place(group)} failed: ${e}`,
          );
        });
      }
      if (tally.stoppedBecause) break;
    }
    const counts = this.counts(tally);
    if (tally.stoppedBecause === undefined) return counts;
    return {
      ...counts,
      status: signal?.aborted ? 'failed' : 'stopped-at-limit',
      stoppedBecause: tally.stoppedBecause,
    };
  }

  /** The group's claims that fit the run's limits, oldest first; sets `stoppedBecause` at the first that does not. */
  private takeWithinLimits(
    group: PlannedGroup,
    eligible: PlannedClaim[],
    tally: RunTally,
  ): PlannedClaim[] {
    const { maxClaimsPerRun, maxBytesPerRun } = this.deps.options;
    const taken: PlannedClaim[] = [];
    for (const claim of eligible) {
      if (tally.claimsTaken + 1 > maxClaimsPerRun) {
        tally.stoppedBecause = `stopped at maxClaimsPerRun (${maxClaimsPerRun}): ${
          claim.name
        } of ${place(group)} and the claims after it wait for the next run`;
        break;
      }
      if (tally.bytesTaken + claim.bytes > maxBytesPerRun) {
        tally.stoppedBecause = `stopped at maxBytesPerRun (${(
          maxBytesPerRun / GIB
        ).toFixed(1)} GiB): ${claim.name} of ${place(group)} (${(
          claim.bytes / GIB
        ).toFixed(1)} GiB) and the claims after it wait for the next run`;
        break;
      }
      tally.take([claim]);
      taken.push(claim);
    }
    return taken;
  }

  /** "Will be pruned on D": once per scope, for the claims about to become eligible. */
  private async tellBefore(group: PlannedGroup, startedAt: Date) {
    if (group.upcoming.length === 0) return;
    const upcoming = [...group.upcoming].sort(byEligibleAt);
    const first = upcoming[0].eligibleAt;
    const scope = noticeScope(group, first);
    // A notice updated in place (same scope) when claims were announced since.
    if (
      !upcoming.some(c => c.newlyAnnounced) &&
      (await this.deps.runs.noticeSent(scope))
    )
      return;
    const prunedOn = firstRunAtOrAfter(
      this.deps.options.schedule,
      first,
      startedAt,
    );
    if (await this.deps.notifier.before(group, upcoming, prunedOn, scope))
      await this.deps.runs.recordNotice(scope);
  }

  private where(group: PlannedGroup) {
    return {
      cluster: group.cluster,
      namespace: group.namespace,
      statefulSet: group.statefulSet,
    };
  }

  private async pruneGroup(
    runId: string,
    group: PlannedGroup,
    taken: PlannedClaim[],
    deferred: PlannedClaim[],
    tally: RunTally,
  ) {
    const scope = noticeScope(group, taken[0].eligibleAt);
    const request = (
      pvcs: Array<{ name: string; uid: string }>,
      dryRun: boolean,
    ) => ({
      request: {
        entityRef: group.through.entityRef,
        cluster: group.cluster,
        namespace: group.namespace,
        statefulSet: group.statefulSet,
        pvcs,
        dryRun,
      },
      onBehalfOf: group.through,
      runId,
    });
    const dryRun = await this.untilEnded(
      await this.deps.prunes.start(
        request(
          taken.map(c => ({ name: c.name, uid: c.uid })),
          true,
        ),
      ),
    );
    const kept = keptAtDryRun(dryRun);
    const problem = dryRunProblem(dryRun, kept);
    if (problem !== undefined) {
      tally.giveBack(taken);
      tally.dryRunFailures += 1;
      tally.outcomes.push({
        ...this.where(group),
        outcome: 'dry-run-failed',
        reason: problem,
      });
      // Told once per planned prune, not again on every run it keeps failing.
      const told = `${scope}#dry-run-failed`;
      if (
        !(await this.deps.runs.noticeSent(told)) &&
        (await this.deps.notifier.dryRunFailed(group, taken, problem, scope))
      )
        await this.deps.runs.recordNotice(told);
      return;
    }
    tally.kept += kept.length;
    const held = new Set(kept.map(c => c.uid));
    tally.giveBack(taken.filter(c => held.has(c.uid)));
    const keptOutcome =
      kept.length > 0
        ? { kept: kept.map(c => `${c.name}: ${c.reason ?? 'kept'}`) }
        : {};
    const confirmed = new Set(dryRun.summary.deleted.map(c => c.uid));
    if (confirmed.size === 0) {
      tally.outcomes.push({
        ...this.where(group),
        outcome: 'kept',
        ...keptOutcome,
      });
      return;
    }
    const job = await this.untilEnded(
      await this.deps.prunes.start(
        request(
          taken
            .filter(c => confirmed.has(c.uid))
            .map(c => ({ name: c.name, uid: c.uid })),
          false,
        ),
      ),
    );
    tally.statefulSets += 1;
    tally.deleted += job.summary.deleted.length;
    tally.bytesDeleted += job.summary.bytesReclaimed;
    tally.outcomes.push({
      ...this.where(group),
      outcome: 'pruned',
      deleted: job.summary.deleted.map(c => c.name),
      ...keptOutcome,
      ...(job.reason ? { reason: job.reason } : {}),
    });
    await this.deps.notifier.after({
      group,
      job,
      deferred,
      keptAtDryRun: kept,
      scope,
      currency: this.deps.currency,
    });
  }

  /** The job once it ended, read from the store; an error past the deadline. */
  private async untilEnded(job: PruneJob): Promise<PruneJob> {
    let current = job;
    let waited = 0;
    while (!FINAL.has(current.status)) {
      // Past its timeout the scheduler lets another replica start the next run: this one must end now.
      if (this.runSignal?.aborted)
        throw new Error(
          `the run reached its timeout while ${
            current.dryRun ? 'dry run' : 'prune'
          } job ${
            current.id
          } ran; it goes on, and its history says how it ends`,
        );
      if (waited >= this.jobDeadlineMs)
        throw new Error(
          `${current.dryRun ? 'dry run' : 'prune'} job ${
            current.id
          } did not end within ${Math.round(
            this.jobDeadlineMs / 1000,
          )} s; it goes on, and its history says how it ends`,
        );
      await this.sleep(this.pollMs);
      waited += this.pollMs;
      const read = await this.deps.jobs.getJob(current.id);
      if (!read) throw new Error(`job ${current.id} is gone from the store`);
      current = read;
    }
    return current;
  }

  private async audit(runId: string, result: AutoPruneRunResult) {
    if (!this.deps.auditor) return;
    const { outcomes, ...summary } = result;
    const event = await this.deps.auditor.createEvent({
      eventId: 'auto-prune-run',
      severityLevel: 'medium',
      meta: { runId },
    });
    const meta = {
      ...summary,
      outcomes: (outcomes ?? []).slice(0, 50).map(o => ({ ...o })),
    };
    if (result.status === 'failed')
      await event.fail({ error: new Error(result.stoppedBecause), meta });
    else await event.success({ meta });
  }
}
