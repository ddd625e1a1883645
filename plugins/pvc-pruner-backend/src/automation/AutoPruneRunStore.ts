import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import { SchedulerServiceTaskScheduleDefinition } from '@backstage/backend-plugin-api';
import { durationToMilliseconds, HumanDuration } from '@backstage/types';
import { CronTime } from 'cron';
import type {
  AutoPruneRun,
  AutoPruneRunStatus,
} from 'backstage-plugin-pvc-pruner-common';
import { openStoreDatabase, StoreOptions } from '../database/migrate';
import { Timestamp, timestampToIso } from '../database/timestamps';
import type { AutoPruneSchedule } from './types';

const RUNS = 'pvc_pruner_auto_prune_runs';
const NOTICES = 'pvc_pruner_auto_prune_notices';
/** The outcomes kept per run, for the log and audit: enough to read, bounded whatever the fleet. */
export const MAX_STORED_OUTCOMES = 200;
const MAX_OUTCOMES_CHARS = 64_000;
const MAX_TEXT = 1000;

/** What became of one StatefulSet in a run (stored, never served). */
export interface AutoPruneOutcome {
  cluster: string;
  namespace: string;
  statefulSet: string;
  /** `kept`: its dry run held back every claim (each kept meanwhile). */
  outcome: 'pruned' | 'kept' | 'dry-run-failed' | 'error';
  deleted?: string[];
  /** Claims the dry run held back ("name: why"): a keep made meanwhile, or a reason of their own. */
  kept?: string[];
  reason?: string;
}

/** A run's counts and how it ended. */
export type AutoPruneRunResult = Omit<
  AutoPruneRun,
  'id' | 'startedAt' | 'finishedAt'
> & { outcomes?: AutoPruneOutcome[] };

interface RunRow {
  id: string;
  started_at: Timestamp;
  finished_at: Timestamp | null;
  status: string;
  considered: number | string;
  eligible: number | string;
  deleted: number | string;
  kept: number | string;
  bytes_deleted: number | string;
  state_sets: number | string;
  dry_run_failures: number | string;
  stopped_because: string | null;
}

const capped = (text: string) =>
  text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;

/** The outcomes as stored: at most MAX_STORED_OUTCOMES, their texts cut, the whole under MAX_OUTCOMES_CHARS. */
function outcomesJson(outcomes: AutoPruneOutcome[]): string {
  const kept = outcomes.slice(0, MAX_STORED_OUTCOMES).map(o => ({
    ...o,
    deleted: o.deleted?.slice(0, 50),
    kept: o.kept?.slice(0, 50).map(capped),
    reason: o.reason === undefined ? undefined : capped(o.reason),
  }));
  let json = JSON.stringify({ outcomes: kept, total: outcomes.length });
  while (json.length > MAX_OUTCOMES_CHARS && kept.length > 0) {
    kept.splice(Math.ceil(kept.length / 2));
    json = JSON.stringify({ outcomes: kept, total: outcomes.length });
  }
  return json;
}

function runOf(row: RunRow): AutoPruneRun {
  return {
    id: row.id,
    startedAt: timestampToIso(row.started_at),
    ...(row.finished_at !== null
      ? { finishedAt: timestampToIso(row.finished_at) }
      : {}),
    status: row.status as AutoPruneRunStatus,
    considered: Number(row.considered),
    eligible: Number(row.eligible),
    deleted: Number(row.deleted),
    kept: Number(row.kept),
    bytesDeleted: Number(row.bytes_deleted),
    statefulSets: Number(row.state_sets),
    dryRunFailures: Number(row.dry_run_failures),
    ...(row.stopped_because !== null
      ? { stoppedBecause: row.stopped_because }
      : {}),
  };
}

/** The frequency's length in ms, for a duration schedule; undefined for cron or manual. */
function frequencyMs(
  frequency: SchedulerServiceTaskScheduleDefinition['frequency'],
): number | undefined {
  if ('cron' in frequency || 'trigger' in frequency) return undefined;
  if ('toMillis' in frequency && typeof frequency.toMillis === 'function')
    return frequency.toMillis();
  return durationToMilliseconds(frequency as HumanDuration);
}

/**
 * When the run that prunes a claim eligible at `eligibleAt` happens: for a
 * duration schedule, the first run at or after it counting from a run's
 * start; for cron, its first time at or after it; otherwise `eligibleAt`.
 */
export function firstRunAtOrAfter(
  schedule: SchedulerServiceTaskScheduleDefinition,
  eligibleAt: string,
  runStartedAt: Date,
): string {
  const { frequency } = schedule;
  const at = Date.parse(eligibleAt);
  if ('cron' in frequency) {
    try {
      return (
        new CronTime(frequency.cron)
          .getNextDateFrom(new Date(at - 1000))
          .toUTC()
          .toISO() ?? eligibleAt
      );
    } catch {
      return eligibleAt;
    }
  }
  const ms = frequencyMs(frequency);
  if (!ms || at <= runStartedAt.getTime()) return eligibleAt;
  const runs = Math.ceil((at - runStartedAt.getTime()) / ms);
  return new Date(runStartedAt.getTime() + runs * ms).toISOString();
}

/** Why a run left `running` by a replica that stopped is recorded as failed. */
export const LOST_RUN =
  'it had not finished when the next run started, past its timeout: its replica stopped, or it overran (its own result then replaces this)';

/**
 * The automatic runs, one row each with its summary (`AutoPruneRun`), and
 * the before-notices already sent, by scope. It answers the last run and
 * the next for the card and the fleet page. Timestamps are the database's.
 */
export class AutoPruneRunStore implements AutoPruneSchedule {
  static async create(
    options: StoreOptions & {
      schedule: SchedulerServiceTaskScheduleDefinition;
    },
  ): Promise<AutoPruneRunStore> {
    const { db, now } = await openStoreDatabase(options);
    return new AutoPruneRunStore(db, now, options.schedule);
  }

  private constructor(
    private readonly db: Knex,
    private readonly now: () => Promise<Date>,
    private readonly schedule: SchedulerServiceTaskScheduleDefinition,
  ) {}

  /**
   * Records a run that starts now, `running`, and records as failed the runs
   * still `running`: the scheduler starts a run only once the last one
   * released its lock or outlived its timeout, where a run ends itself, so
   * one still `running` lost its replica or overran. Should it finish after
   * all, its own result replaces this.
   */
  async startRun(): Promise<AutoPruneRun> {
    const id = randomUUID();
    const startedAt = await this.now();
    await this.db(RUNS).where({ status: 'running' }).update({
      status: 'failed',
      finished_at: startedAt,
      stopped_because: LOST_RUN,
    });
    await this.db(RUNS).insert({
      id,
      started_at: startedAt,
      status: 'running',
    });
    return (await this.getRun(id))!;
  }

  /** Records how the run ended, now. */
  async finishRun(id: string, result: AutoPruneRunResult): Promise<void> {
    await this.db(RUNS)
      .where({ id })
      .update({
        finished_at: await this.now(),
        status: result.status,
        considered: result.considered,
        eligible: result.eligible,
        deleted: result.deleted,
        kept: result.kept,
        bytes_deleted: Math.round(result.bytesDeleted),
        state_sets: result.statefulSets ?? 0,
        dry_run_failures: result.dryRunFailures ?? 0,
        stopped_because:
          result.stoppedBecause === undefined
            ? null
            : capped(result.stoppedBecause),
        outcomes: result.outcomes ? outcomesJson(result.outcomes) : null,
      });
  }

  async getRun(id: string): Promise<AutoPruneRun | undefined> {
    const row = await this.db<RunRow>(RUNS).where({ id }).first();
    return row ? runOf(row) : undefined;
  }

  /** The newest run (running or not). */
  async lastRun(): Promise<AutoPruneRun | undefined> {
    const row = await this.db<RunRow>(RUNS)
      .orderBy('started_at', 'desc')
      .orderBy('id', 'desc')
      .first();
    return row ? runOf(row) : undefined;
  }

  /**
   * A duration schedule: the last run's start plus the frequency (now plus
   * it, before any run: the scheduler starts one soon after start-up, so
   * that is an upper bound). A cron schedule: its next time from now.
   */
  async nextRunAt(): Promise<string | undefined> {
    const { frequency } = this.schedule;
    if ('cron' in frequency) {
      try {
        return (
          new CronTime(frequency.cron).sendAt().toUTC().toISO() ?? undefined
        );
      } catch {
        return undefined;
      }
    }
    const ms = frequencyMs(frequency);
    if (ms === undefined) return undefined;
    const last = await this.lastRun();
    const from = last ? new Date(last.startedAt) : await this.now();
    return new Date(from.getTime() + ms).toISOString();
  }

  /** Whether a before-notice with this scope was sent. */
  async noticeSent(scope: string): Promise<boolean> {
    return (await this.db(NOTICES).where({ scope }).first()) !== undefined;
  }

  /** Remembers that a before-notice with this scope was sent. */
  async recordNotice(scope: string): Promise<void> {
    await this.db(NOTICES)
      .insert({ scope, sent_at: await this.now() })
      .onConflict('scope')
      .ignore();
  }

  /**
   * Deletes runs that finished, or started and never finished (their
   * replica stopped), and notices sent, more than `olderThanMs` ago;
   * answers how many runs.
   */
  async deleteOlderThan(olderThanMs: number): Promise<number> {
    const before = new Date((await this.now()).getTime() - olderThanMs);
    await this.db(NOTICES).where('sent_at', '<', before).delete();
    return Number(
      await this.db(RUNS)
        .where('finished_at', '<', before)
        .orWhere(q =>
          q.whereNull('finished_at').where('started_at', '<', before),
        )
        .delete(),
    );
  }
}
