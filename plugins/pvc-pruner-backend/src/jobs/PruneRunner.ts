import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import {
  describeInUse,
  describeKept,
  formatBytes,
  PruneJob,
  PruneJobStatus,
  PruneSummary,
  PvcOutcome,
  TERMINAL_JOB_STATUSES,
} from 'backstage-plugin-pvc-pruner-common';
import { ConflictError } from '@backstage/errors';
import { JobEvents } from './JobEvents';
import { ClusterRequestError, KubeGateway } from '../kubernetes';
import { HeldLease } from './LeaseLock';
import {
  classifyClaims,
  parseClaimName,
  podAsTheRuleReadsIt,
} from '../orphans';
import { PruneJobStore } from '../database';
import { StatefulSetGuard } from './StatefulSetGuard';
import { VolumeFollower } from './VolumeFollower';

export interface PruneRunnerOptions {
  /** How often the lease is renewed while the job runs. */
  renewIntervalMs: number;
}

export interface PruneResult {
  status: PruneJobStatus;
  reason?: string;
  summary: PruneSummary;
}

type Confirmed = { name: string; uid: string; ordinal: number };

/** Deletions finish in any order (claims are followed in parallel); report them by ordinal. */
function sortDeleted(summary: PruneSummary) {
  summary.deleted.sort(
    (a, b) =>
      (a.ordinal ?? 0) - (b.ordinal ?? 0) || a.name.localeCompare(b.name),
  );
}

/**
 * Runs one prune job: watches the StatefulSet, re-checks each confirmed
 * claim right before deleting it (lowest ordinal first), deletes with uid +
 * resourceVersion preconditions, then follows each claim and its volume.
 * With dryRun every write carries dryRun=All.
 */
export class PruneRunner {
  constructor(
    private readonly store: PruneJobStore,
    private readonly events: JobEvents,
    private readonly follower: VolumeFollower,
    private readonly options: PruneRunnerOptions,
  ) {}

  /** `stopping` tells the job its Backstage instance is shutting down: it stops before the next delete. */
  async run(
    job: PruneJob,
    gateway: KubeGateway,
    lease: HeldLease,
    stopping: () => boolean = () => false,
  ): Promise<PruneResult> {
    const summary: PruneSummary = {
      deleted: [],
      skipped: [],
      failed: [],
      bytesReclaimed: 0,
    };
    let leaseLost: string | undefined;
    const renewal = setInterval(() => {
      lease.renew().catch(e => {
        leaseLost ??= `the lease ${lease.namespace}/${
          lease.name
        } could not be renewed (${(e as Error).message})`;
      });
    }, this.options.renewIntervalMs);
    let guard: StatefulSetGuard | undefined;
    const follows: Promise<void>[] = [];
    try {
      const startedAt = new Date().toISOString();
      await this.store.updateJob(job.id, { status: 'running', startedAt });
      await this.events.append({
        jobId: job.id,
        type: 'job-started',
        message: `${job.dryRun ? 'Dry run' : 'Prune'} started on cluster ${
          job.cluster
        }`,
      });
      await this.events.append({
        jobId: job.id,
        type: 'lease-acquired',
        message: job.dryRun
          ? `Lease ${lease.namespace}/${lease.name} is free (a dry run does not hold it)`
          : `Holding lease ${lease.namespace}/${lease.name}`,
      });
      guard = await StatefulSetGuard.start(
        gateway,
        job.namespace,
        job.statefulSet,
      );
      const queue = this.order(job, guard, summary);
      for (const [index, confirmed] of queue.entries()) {
        const ended = await this.endedElsewhere(job.id);
        if (ended) {
          // No events: the log already ended with the other replica's job-finished.
          this.notAttempted(
            queue.slice(index),
            summary,
            `the job was ended elsewhere (${ended.status})`,
          );
          return await this.keepEnding(ended, summary, follows);
        }
        if (stopping()) {
          const reason = 'the Backstage instance running this job shut down';
          await this.announce(
            job,
            this.notAttempted(queue.slice(index), summary, reason),
          );
          return await this.finish(
            job,
            summary,
            follows,
            'interrupted',
            `Interrupted: ${reason}; run a new scan`,
          );
        }
        // A refused user token first: every later reason (the watch, the lease) follows from it.
        const abortReason =
          gateway.userTokenRefused?.message ?? guard.abortReason ?? leaseLost;
        if (abortReason) {
          await this.announce(
            job,
            this.notAttempted(
              queue.slice(index),
              summary,
              `the job stopped because ${abortReason}`,
            ),
          );
          return await this.finish(
            job,
            summary,
            follows,
            'aborted',
            abortReason,
          );
        }
        await this.pruneOne(job, gateway, guard, confirmed, summary, follows);
      }
      const failed = summary.failed.length > 0;
      return await this.finish(
        job,
        summary,
        follows,
        failed ? 'failed' : 'succeeded',
        failed
          ? gateway.userTokenRefused?.message ??
              `${summary.failed.length} claim(s) could not be deleted`
          : undefined,
      );
    } catch (e) {
      return await this.finish(
        job,
        summary,
        follows,
        'failed',
        (e as Error).message,
      );
    } finally {
      clearInterval(renewal);
      guard?.stop();
      await lease.release().catch(() => undefined);
    }
  }

  /** Confirmed claims of this StatefulSet, lowest ordinal first; anything else is skipped at once. */
  private order(
    job: PruneJob,
    guard: StatefulSetGuard,
    summary: PruneSummary,
  ): Confirmed[] {
    const queue: Confirmed[] = [];
    for (const pvc of job.pvcs) {
      const parsed = parseClaimName(pvc.name, guard.current);
      if (parsed?.ordinal === undefined) {
        summary.skipped.push({
          ...pvc,
          reason: `not a claim of StatefulSet ${job.namespace}/${job.statefulSet}`,
        });
      } else {
        queue.push({ ...pvc, ordinal: parsed.ordinal });
      }
    }
    return queue.sort(
      (a, b) => a.ordinal - b.ordinal || a.name.localeCompare(b.name),
    );
  }

  private async skip(
    job: PruneJob,
    summary: PruneSummary,
    outcome: PvcOutcome,
  ) {
    summary.skipped.push(outcome);
    await this.announce(job, [outcome]);
  }

  /** Records claims the job stops before reaching as skipped; returns their outcomes. */
  private notAttempted(
    rest: Confirmed[],
    summary: PruneSummary,
    why: string,
  ): PvcOutcome[] {
    const outcomes = rest.map(pvc => ({
      ...pvc,
      reason: `not attempted: ${why}`,
    }));
    summary.skipped.push(...outcomes);
    return outcomes;
  }

  /** A pvc-skipped event for each outcome. */
  private async announce(job: PruneJob, skipped: PvcOutcome[]) {
    for (const outcome of skipped) {
      await this.events.append({
        jobId: job.id,
        type: 'pvc-skipped',
        pvc: outcome.name,
        message: `Skipped ${outcome.name}: ${outcome.reason}`,
        outcome,
      });
    }
  }

  /** Re-checks and deletes one claim; adds the follow-up that tracks its fate to `follows`. */
  private async pruneOne(
    job: PruneJob,
    gateway: KubeGateway,
    guard: StatefulSetGuard,
    confirmed: Confirmed,
    summary: PruneSummary,
    follows: Promise<void>[],
  ): Promise<void> {
    const base = {
      name: confirmed.name,
      uid: confirmed.uid,
      ordinal: confirmed.ordinal,
    };
    let claim: V1PersistentVolumeClaim | undefined;
    let verdict;
    try {
      claim = await gateway.readClaim(job.namespace, confirmed.name);
      if (!claim) {
        await this.skip(job, summary, {
          ...base,
          reason: 'it no longer exists',
        });

        return;
      }
      if (claim.metadata?.uid !== confirmed.uid) {
        await this.skip(job, summary, {
          ...base,
          reason:
            'it was deleted and recreated since you confirmed it (uid changed)',
        });
        return;
      }
      const pods = await gateway.listPods(job.namespace, podAsTheRuleReadsIt);
      verdict = classifyClaims({
        statefulSet: guard.current,
        claims: [claim],
        pods,
        volumes: new Map(),
      });
    } catch (e) {
      await this.fail(job, summary, { ...base, reason: (e as Error).message });
      return;
    }
    const kept = verdict.kept[0];
    const inUse = verdict.inUse[0];
    if (kept || inUse) {
      await this.skip(job, summary, {
        ...base,
        reason: `it is no longer an orphan: ${
          kept ? describeKept(kept, verdict) : describeInUse(inUse, verdict)
        }`,
      });
      return;
    }
    const orphan = verdict.orphans[0];
    const bytes = orphan.capacityBytes ?? orphan.requestedBytes;
    const volumeName = claim.spec?.volumeName;
    const reclaimPolicy = volumeName
      ? (await gateway.readVolume(volumeName).catch(() => undefined))?.spec
          ?.persistentVolumeReclaimPolicy
      : undefined;
    const outcome: PvcOutcome = {
      ...base,
      bytes,
      ...(volumeName
        ? {
            volume: {
              name: volumeName,
              reclaimPolicy,
              fate: 'unknown' as const,
            },
          }
        : {}),
    };

    await this.events.append({
      jobId: job.id,
      type: 'pvc-deleting',
      pvc: confirmed.name,
      message: `${job.dryRun ? 'Dry run: deleting' : 'Deleting'} ${
        confirmed.name
      } (${formatBytes(bytes)})`,
    });
    try {
      await gateway.deleteClaim(
        job.namespace,
        confirmed.name,
        {
          uid: confirmed.uid,
          resourceVersion: claim.metadata!.resourceVersion!,
        },
        job.dryRun,
      );
    } catch (e) {
      if (
        e instanceof ClusterRequestError &&
        (e.statusCode === 409 || e.statusCode === 404)
      ) {
        await this.skip(job, summary, {
          ...base,
          reason: `it changed after it was checked (${
            e.reason ?? e.statusCode
          }), so it was not deleted`,
        });
        return;
      }
      await this.fail(job, summary, { ...base, reason: (e as Error).message });
      return;
    }
    if (job.dryRun) {
      const fate = reclaimPolicy === 'Retain' ? 'released' : 'deleted';
      await this.deleted(job, summary, {
        ...outcome,
        ...(outcome.volume ? { volume: { ...outcome.volume, fate } } : {}),
      });
      return;
    }
    follows.push(
      this.followUp(job, gateway, summary, outcome).catch(e => {
        summary.failed.push({
          ...outcome,
          reason: `could not follow the deletion: ${(e as Error).message}`,
        });
      }),
    );
  }

  private async followUp(
    job: PruneJob,
    gateway: KubeGateway,
    summary: PruneSummary,
    outcome: PvcOutcome,
  ) {
    const gone = await this.follower
      .claimGone(gateway, job.namespace, outcome.name)
      .catch(() => false);
    if (!gone) {
      await this.deleted(
        job,
        summary,
        outcome,
        `Deletion of ${outcome.name} was accepted; it is still terminating`,
      );
      return;
    }
    await this.deleted(job, summary, outcome);
    if (!outcome.volume) return;
    const fate = await this.follower
      .volumeFate(gateway, outcome.volume.name, outcome.volume.reclaimPolicy)
      .catch(() => 'unknown' as const);
    outcome.volume.fate = fate;
    if (fate === 'deleted') {
      summary.bytesReclaimed += outcome.bytes ?? 0;
      await this.events.append({
        jobId: job.id,
        type: 'volume-deleted',
        pvc: outcome.name,
        message: `Volume ${outcome.volume.name} was deleted (reclaim policy Delete)`,
        outcome,
      });
    } else if (fate === 'released') {
      await this.events.append({
        jobId: job.id,
        type: 'volume-released',
        pvc: outcome.name,
        message: `Volume ${
          outcome.volume.name
        } is Released and kept (reclaim policy ${
          outcome.volume.reclaimPolicy ?? 'Retain'
        }): the disk still exists and is still billed`,
        outcome,
      });
    }
  }

  private async deleted(
    job: PruneJob,
    summary: PruneSummary,
    outcome: PvcOutcome,
    message?: string,
  ) {
    summary.deleted.push(outcome);
    if (job.dryRun && outcome.volume?.fate === 'deleted')
      summary.bytesReclaimed += outcome.bytes ?? 0;
    await this.events.append({
      jobId: job.id,
      type: 'pvc-deleted',
      pvc: outcome.name,
      message:
        message ??
        (job.dryRun
          ? `Dry run: ${outcome.name} would be deleted`
          : `Deleted ${outcome.name}`),
      outcome,
    });
  }

  private async fail(
    job: PruneJob,
    summary: PruneSummary,
    outcome: PvcOutcome,
  ) {
    summary.failed.push(outcome);
    await this.events.append({
      jobId: job.id,
      type: 'pvc-failed',
      pvc: outcome.name,
      message: `Could not delete ${outcome.name}: ${outcome.reason}`,
      outcome,
    });
  }

  /** The job as stored, when something else has ended it: another replica's sweep that took this instance for dead. */
  private async endedElsewhere(jobId: string): Promise<PruneJob | undefined> {
    // A failed read is not a reason to stop: the next write would fail as clearly.
    const stored = await this.store.getJob(jobId).catch(() => undefined);
    return stored && TERMINAL_JOB_STATUSES.includes(stored.status)
      ? stored
      : undefined;
  }

  /** Leaves the job as it was ended elsewhere, but records what this run did before it noticed. */
  private async keepEnding(
    ended: PruneJob,
    summary: PruneSummary,
    follows: Promise<void>[],
  ): Promise<PruneResult> {
    await Promise.allSettled(follows);
    sortDeleted(summary);
    await this.store.updateJob(ended.id, { summary });
    return { status: ended.status, reason: ended.reason, summary };
  }

  private async finish(
    job: PruneJob,
    summary: PruneSummary,
    follows: Promise<void>[],
    status: PruneJobStatus,
    reason?: string,
  ): Promise<PruneResult> {
    await Promise.allSettled(follows);
    sortDeleted(summary);
    try {
      await this.store.updateJob(job.id, {
        status,
        reason,
        summary,
        finishedAt: new Date().toISOString(),
      });
    } catch (e) {
      const ended =
        e instanceof ConflictError && (await this.endedElsewhere(job.id));
      if (!ended) throw e;
      return await this.keepEnding(ended, summary, follows);
    }
    const counts = `${summary.deleted.length} ${
      job.dryRun ? 'would be deleted' : 'deleted'
    }, ${summary.skipped.length} skipped, ${summary.failed.length} failed`;
    await this.events.append({
      jobId: job.id,
      type: 'job-finished',
      status,
      message: `${job.dryRun ? 'Dry run' : 'Prune'} ${status}: ${counts}${
        reason ? `. ${reason}` : ''
      }`,
    });
    return { status, reason, summary };
  }
}
