import { LoggerService, SchedulerService } from '@backstage/backend-plugin-api';
import { PruneJobStore } from '../database';

export const SWEEP_TASK_ID = 'pvc-pruner-interrupted-job-sweep';

export const INTERRUPTED_REASON =
  'The Backstage instance running this job stopped before it finished; check the StatefulSet and run a new scan';

/**
 * Marks jobs whose process died as interrupted, so none is left "running"
 * forever. Periodic upkeep on Backstage's scheduler with `scope: 'global'`:
 * one replica sweeps at a time, whichever it is, as the notifications
 * backend's NotificationCleaner does. Staleness is judged by the database's
 * clock (see PruneJobStore.markInterrupted), never this replica's.
 */
export class InterruptedJobSweeper {
  private constructor(
    private readonly store: PruneJobStore,
    private readonly logger: LoggerService,
    private readonly staleAfterMs: number,
  ) {}

  /** Schedules the sweep every `staleAfterMs` (first run at startup). */
  static async schedule(options: {
    scheduler: SchedulerService;
    store: PruneJobStore;
    logger: LoggerService;
    /** A job whose heartbeat is older than this is taken for dead. */
    staleAfterMs: number;
  }): Promise<InterruptedJobSweeper> {
    const sweeper = new InterruptedJobSweeper(
      options.store,
      options.logger,
      options.staleAfterMs,
    );
    await options.scheduler.scheduleTask({
      id: SWEEP_TASK_ID,
      scope: 'global',
      frequency: { milliseconds: options.staleAfterMs },
      timeout: { minutes: 5 },
      fn: () => sweeper.sweep(),
    });
    return sweeper;
  }

  async sweep(): Promise<void> {
    try {
      const interrupted = await this.store.markInterrupted({
        staleAfterMs: this.staleAfterMs,
        reason: INTERRUPTED_REASON,
      });
      for (const job of interrupted)
        this.logger.warn(
          `pvc-pruner: job ${job.id} (${job.namespace}/${job.statefulSet}) was interrupted`,
        );
    } catch (e) {
      this.logger.warn(`pvc-pruner: could not sweep interrupted jobs: ${e}`);
    }
  }
}
