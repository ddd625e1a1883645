import { ConflictError } from '@backstage/errors';
import {
  PruneEvent,
  PruneJob,
  PruneJobStatus,
  PruneSummary,
  TERMINAL_JOB_STATUSES,
} from 'backstage-plugin-pvc-pruner-common';
import { PruneJobPatch, PruneJobStore } from '../database';
import { JobEvents } from './JobEvents';

/** How a job ended: its status, why, and what it did. */
export interface PruneResult {
  status: PruneJobStatus;
  reason?: string;
  summary: PruneSummary;
}

/**
 * Ends jobs, minding that another replica's InterruptedJobSweeper may have
 * ended one already, taking this instance for dead: that ending stands (its
 * last event is already in the log), and only what this run did is recorded.
 */
export class JobEnding {
  constructor(
    private readonly store: PruneJobStore,
    private readonly events: JobEvents,
  ) {}

  /** The job as stored, when something else has ended it. */
  async endedElsewhere(jobId: string): Promise<PruneJob | undefined> {
    // A failed read is not a reason to stop: the next write would fail as clearly.
    const stored = await this.store.getJob(jobId).catch(() => undefined);
    return stored && TERMINAL_JOB_STATUSES.includes(stored.status)
      ? stored
      : undefined;
  }

  /** Leaves the job as it was ended elsewhere, but records what this run did before it noticed. */
  async keepEnding(
    ended: PruneJob,
    summary: PruneSummary,
  ): Promise<PruneResult> {
    await this.store.updateJob(ended.id, { summary });
    return { status: ended.status, reason: ended.reason, summary };
  }

  /** Ends the job with its last event, or keeps the ending another replica wrote first. */
  async finish(
    jobId: string,
    patch: PruneJobPatch & PruneResult,
    lastEvent: Omit<PruneEvent, 'seq' | 'at' | 'jobId'>,
  ): Promise<PruneResult> {
    try {
      await this.events.finish(jobId, patch, lastEvent);
    } catch (e) {
      const ended =
        e instanceof ConflictError && (await this.endedElsewhere(jobId));
      if (!ended) throw e;
      return await this.keepEnding(ended, patch.summary);
    }
    return {
      status: patch.status,
      reason: patch.reason,
      summary: patch.summary,
    };
  }
}
