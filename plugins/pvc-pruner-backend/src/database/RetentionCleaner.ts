import { LoggerService, SchedulerService } from '@backstage/backend-plugin-api';
import type { ClaimKeepStore } from '../automation/ClaimKeepStore';
import type { ClaimLineageStore, ReferencedClaimUids } from '../lineage';
import { OrphanSightingStore } from './OrphanSightingStore';
import { PruneJobStore } from './PruneJobStore';

/** Automatic runs and the notices they sent (AutoPruneRunStore). */
export interface AutoPruneRecords {
  deleteOlderThan(olderThanMs: number): Promise<number>;
}

export const RETENTION_TASK_ID = 'pvc-pruner-retention';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Deletes what is older than `pvcPruner.retentionDays`: finished jobs with
 * their events, the sightings of claims no scan has seen as orphans for
 * that long, card keeps that ended that long ago, automatic jobs'
 * deleting marks that old, announcements no automatic run has planned for
 * that long, and the lineage of claims no scan has seen for that long
 * unless a cluster still references them (a claim that exists, or one a
 * Released volume's claimRef names: ReferencedClaimUids). Daily upkeep on Backstage's scheduler with `scope: 'global'`,
 * so one replica cleans at a time, as the notifications backend's
 * NotificationCleaner does. Age is judged by the database's clock, as the
 * stores judge it everywhere.
 */
export class RetentionCleaner {
  private constructor(
    private readonly jobs: PruneJobStore,
    private readonly sightings: OrphanSightingStore,
    private readonly lineage: Pick<ClaimLineageStore, 'deleteNotSeenFor'>,
    private readonly logger: LoggerService,
    private readonly retentionDays: number,
    private readonly referenced?: Pick<ReferencedClaimUids, 'snapshot'>,
    private readonly keeps?: Pick<ClaimKeepStore, 'deleteOlderThan'>,
    private readonly autoPruneRuns?: AutoPruneRecords,
    private readonly announcements?: AutoPruneRecords,
  ) {}

  /** Schedules the clean-up once a day, the first a few minutes after start. */
  static async schedule(options: {
    scheduler: SchedulerService;
    jobs: PruneJobStore;
    sightings: OrphanSightingStore;
    lineage: Pick<ClaimLineageStore, 'deleteNotSeenFor'>;
    /** What the clusters still reference: its lineage is kept, whatever its age. */
    referenced?: Pick<ReferencedClaimUids, 'snapshot'>;
    /** Card keeps that ended, and automatic jobs' deleting marks. */
    keeps?: Pick<ClaimKeepStore, 'deleteOlderThan'>;
    /** Automatic runs finished, and before-notices sent, that long ago are deleted too. */
    autoPruneRuns?: AutoPruneRecords;
    /** Announcements no run has planned for that long (clusters automation no longer reads). */
    announcements?: AutoPruneRecords;
    logger: LoggerService;
    retentionDays: number;
  }): Promise<RetentionCleaner> {
    const cleaner = new RetentionCleaner(
      options.jobs,
      options.sightings,
      options.lineage,
      options.logger,
      options.retentionDays,
      options.referenced,
      options.keeps,
      options.autoPruneRuns,
      options.announcements,
    );
    await options.scheduler.scheduleTask({
      id: RETENTION_TASK_ID,
      scope: 'global',
      frequency: { hours: 24 },
      timeout: { hours: 1 },
      initialDelay: { minutes: 5 },
      fn: () => cleaner.clean(),
    });
    return cleaner;
  }

  async clean(): Promise<void> {
    const olderThanMs = this.retentionDays * DAY_MS;
    try {
      const jobs = await this.jobs.deleteFinishedFor(olderThanMs);
      const sightings = await this.sightings.deleteNotSeenFor(olderThanMs);
      const lineage = await this.lineage.deleteNotSeenFor(
        olderThanMs,
        await this.referenced?.snapshot(),
      );
      const keeps = (await this.keeps?.deleteOlderThan(olderThanMs)) ?? {
        keeps: 0,
        marks: 0,
      };
      const runs =
        (await this.autoPruneRuns?.deleteOlderThan(olderThanMs)) ?? 0;
      const announcements =
        (await this.announcements?.deleteOlderThan(olderThanMs)) ?? 0;
      if (
        jobs > 0 ||
        sightings > 0 ||
        lineage > 0 ||
        keeps.keeps > 0 ||
        keeps.marks > 0 ||
        runs > 0 ||
        announcements > 0
      )
        this.logger.info(
          `pvc-pruner: deleted ${jobs} finished prune jobs (with their events), ${sightings} orphan sightings, the lineage of ${lineage} claims, ${
            keeps.keeps
          } ended claim keeps, ${
            keeps.marks
          } automatic deleting marks and ${runs} automatic runs${
            announcements > 0
              ? ` (and ${announcements} announcements of claims to automatic pruning)`
              : ''
          } older than ${this.retentionDays} days (pvcPruner.retentionDays)`,
        );
    } catch (e) {
      this.logger.warn(`pvc-pruner: could not delete old records: ${e}`);
    }
  }
}
