import {
  emptyPruneSummary,
  PruneJob,
  PruneJobStatus,
  PruneSummary,
  PvcOutcome,
  ReclaimVolumeRef,
} from 'backstage-plugin-pvc-pruner-common';
import { PruneJobStore } from '../database';
import { changedSinceChecked, KubeGateway } from '../kubernetes';
import type { JobEvents, PruneResult, VolumeFollower } from '../jobs';
import { JobEnding } from '../jobs/JobEnding';
import { HeldLease, LeaseLostError } from '../jobs/LeaseLock';
import { mapLimited } from '../mapLimited';
import { readReclaimContext } from './reclaimContext';
import { releasedVolumeFacts, whyNotReclaimable } from './releasedVolumeRule';

/** The longest message quoted from a volume's status. */
const MAX_QUOTED = 300;
/** Volumes followed at once, once patched. */
const FOLLOW_CONCURRENCY = 8;

/** A volume patched to Delete, to follow until its provisioner has deleted it. */
interface Patched {
  seen: SeenVolume;
  outcome: PvcOutcome;
}

/** A volume to reclaim, as the caller saw it, in the namespace of its claim. */
export type SeenVolume = ReclaimVolumeRef & { claimNamespace: string };

const INTERRUPTED =
  'Interrupted: the Backstage instance running this job shut down; list the volumes again';

/**
 * Runs one reclaim job: for each volume, in turn, proves the job still holds
 * its Lease, checks live that the volume is still Released to the claim uid
 * the caller saw, unchanged since (its resourceVersion), and that the claim
 * still does not exist, then patches its reclaim policy to Delete with that
 * resourceVersion as a precondition (dryRun=All for a dry run). Once every
 * patch is sent it releases the Lease (following only reads) and follows the
 * patched volumes, a few at once, until their provisioner has deleted them,
 * they went Failed, or the job's one deadline (`followForMs`) passed.
 */
export class VolumeReclaimRunner {
  constructor(
    private readonly store: PruneJobStore,
    private readonly events: JobEvents,
    private readonly follower: VolumeFollower,
    private readonly options: {
      renewIntervalMs: number;
      /** How long the patched volumes are followed, all together: one deadline for the job, not one per volume. */
      followForMs?: number;
    },
  ) {
    this.ending = new JobEnding(store, events);
  }

  private readonly ending: JobEnding;

  async run(
    job: PruneJob,
    gateway: KubeGateway,
    lease: HeldLease,
    volumes: SeenVolume[],
    stop: AbortSignal,
  ): Promise<PruneResult> {
    const summary = emptyPruneSummary();
    let leaseLost: string | undefined;
    const renewal = setInterval(() => {
      lease.renew().catch(e => {
        if (e instanceof LeaseLostError) leaseLost ??= e.message;
      });
    }, this.options.renewIntervalMs);
    let settled = false;
    const settle = async () => {
      clearInterval(renewal);
      if (settled) return;
      settled = true;
      await lease.release().catch(() => undefined);
    };
    const patched: Patched[] = [];
    // Following only reads: the Lease, which guards the patches, is released first.
    const followPatched = async () => {
      await settle();
      await this.follow(job, gateway, patched, summary, stop);
    };
    const what = job.dryRun ? 'Dry run of reclaiming' : 'Reclaiming';
    try {
      await this.store.updateJob(job.id, {
        status: 'running',
        startedAt: new Date().toISOString(),
      });
      await this.append(
        job,
        'job-started',
        `${what} ${volumes.length} Released volume(s) on cluster ${job.cluster}`,
      );
      await this.append(
        job,
        'lease-acquired',
        job.dryRun
          ? `Lease ${lease.namespace}/${lease.name} is free (a dry run does not hold it)`
          : `Holding lease ${lease.namespace}/${lease.name}`,
      );
      const queue = [...volumes];
      for (const [i, volume] of queue.entries()) {
        const ended = await this.ending.endedElsewhere(job.id);
        if (ended) {
          // No events: the log already ended with the other replica's job-finished.
          summary.skipped.push(
            ...queue.slice(i).map(rest => ({
              name: rest.name,
              uid: rest.uid,
              reason: `not attempted: the job was ended elsewhere (${ended.status})`,
            })),
          );
          await settle();
          return await this.ending.keepEnding(ended, summary);
        }
        const stopped = stop.aborted
          ? { status: 'interrupted' as const, reason: INTERRUPTED }
          : (gateway.userTokenRefused?.message ?? leaseLost) && {
              status: 'aborted' as const,
              reason: (gateway.userTokenRefused?.message ?? leaseLost)!,
            };
        if (stopped) {
          for (const rest of queue.slice(i))
            await this.skip(job, summary, {
              name: rest.name,
              uid: rest.uid,
              reason: `the job stopped before it: ${stopped.reason}`,
            });
          await followPatched();
          return await this.finish(job, summary, settle, stopped);
        }
        try {
          const sent = await this.reclaimOne(
            job,
            gateway,
            lease,
            volume,
            summary,
          );
          if (sent) patched.push(sent);
        } catch (e) {
          if (!(e instanceof LeaseLostError)) throw e;
          leaseLost ??= e.message;
          // The loop's next turn ends the job, naming this volume with the rest.
          queue.splice(i + 1, 0, volume);
        }
      }
      await followPatched();
      return await this.finish(job, summary, settle);
    } catch (e) {
      return await this.finish(job, summary, settle, {
        status: 'failed',
        reason: (e as Error).message,
      });
    }
  }

  private async reclaimOne(
    job: PruneJob,
    gateway: KubeGateway,
    lease: HeldLease,
    seen: SeenVolume,
    summary: PruneSummary,
  ): Promise<Patched | undefined> {
    const base = { name: seen.name, uid: seen.uid };
    await this.append(
      job,
      'volume-reclaiming',
      `${job.dryRun ? 'Dry run: reclaiming' : 'Reclaiming'} ${
        seen.name
      } once a last check shows it is still Released to claim uid ${
        seen.claimUid
      }`,
      seen.name,
    );
    await lease.confirm();
    const pv = await gateway.readVolume(seen.name);
    const facts = pv && releasedVolumeFacts(pv);
    const why =
      whyNotReclaimable(pv, seen, await readReclaimContext(gateway, facts)) ??
      (facts?.claim.namespace !== seen.claimNamespace
        ? `its claim is not in namespace ${seen.claimNamespace}`
        : undefined) ??
      (pv?.metadata?.resourceVersion !== seen.resourceVersion
        ? `it changed since it was listed (resourceVersion ${seen.resourceVersion}, now ${pv?.metadata?.resourceVersion})`
        : undefined);
    if (why) {
      await this.skip(job, summary, { ...base, reason: why });
      return undefined;
    }
    const outcome: PvcOutcome = {
      ...base,
      bytes: facts!.bytes,
      volume: { name: seen.name, reclaimPolicy: 'Delete', fate: 'unknown' },
    };
    let stale = false;
    try {
      await gateway.patchVolumeReclaimPolicyToDelete(
        seen.name,
        { uid: seen.uid, resourceVersion: seen.resourceVersion },
        job.dryRun,
        () => {
          stale = !lease.isFresh();
          if (stale) throw new Error('not sent: the lease is no longer fresh');
        },
      );
    } catch (e) {
      if (stale)
        throw new LeaseLostError(
          `the check before reclaiming ${seen.name} outlasted the time a lease renewal can be trusted`,
        );
      const changed = changedSinceChecked(e);
      if (changed) {
        await this.skip(job, summary, {
          ...base,
          reason: `it changed after it was checked (${changed}), so it was not patched`,
        });
        return undefined;
      }
      // A lost answer (a timeout, a dropped connection) is not a refused patch: ask the cluster.
      if (job.dryRun || !(await patchWentThrough(gateway, seen))) {
        await this.fail(job, summary, {
          ...base,
          reason: (e as Error).message,
        });
        return undefined;
      }
    }
    if (job.dryRun) {
      outcome.volume!.fate = 'deleted';
      summary.deleted.push(outcome);
      summary.bytesReclaimed += outcome.bytes ?? 0;
      await this.append(
        job,
        'volume-deleted',
        `Dry run: ${seen.name} would be reclaimed (its reclaim policy set to Delete, and its disk deleted by its provisioner)`,
        seen.name,
        outcome,
      );
      return undefined;
    }
    return { seen, outcome };
  }

  /** Follows the patched volumes, a few at once, until they are gone or the job's one deadline. */
  private async follow(
    job: PruneJob,
    gateway: KubeGateway,
    patched: Patched[],
    summary: PruneSummary,
    stop: AbortSignal,
  ) {
    if (patched.length === 0) return;
    const { followForMs } = this.options;
    const signal =
      followForMs === undefined
        ? stop
        : AbortSignal.any([stop, AbortSignal.timeout(followForMs)]);
    await mapLimited(patched, FOLLOW_CONCURRENCY, p =>
      this.followOne(job, gateway, p, summary, signal),
    );
  }

  private async followOne(
    job: PruneJob,
    gateway: KubeGateway,
    { seen, outcome }: Patched,
    summary: PruneSummary,
    signal: AbortSignal,
  ) {
    const fate = await this.follower
      .volumeFate(gateway, seen.name, 'Delete', signal)
      .catch(() => 'unknown' as const);
    outcome.volume!.fate = fate;
    if (fate === 'deleted') {
      summary.deleted.push(outcome);
      summary.bytesReclaimed += outcome.bytes ?? 0;
      await this.append(
        job,
        'volume-deleted',
        `Volume ${seen.name} was deleted by its provisioner`,
        seen.name,
        outcome,
      );
    } else if (fate === 'released') {
      const failed = await gateway.readVolume(seen.name).catch(() => undefined);
      const message = (failed?.status?.message ?? '').slice(0, MAX_QUOTED);
      await this.fail(job, summary, {
        ...outcome,
        reason: `its provisioner could not delete it, and it went Failed${
          message ? `: ${message}` : ''
        }`,
      });
    } else {
      summary.terminating.push({
        ...outcome,
        reason:
          'its reclaim policy is Delete, but it was still there when pvc-pruner stopped following it',
      });
      await this.append(
        job,
        'volume-released',
        `${seen.name} is set to Delete but was not seen deleted yet; its provisioner may still be deleting it`,
        seen.name,
        outcome,
      );
    }
  }

  private append(
    job: PruneJob,
    type:
      | 'job-started'
      | 'lease-acquired'
      | 'volume-reclaiming'
      | 'volume-deleted'
      | 'volume-released'
      | 'volume-skipped'
      | 'volume-failed',
    message: string,
    volume?: string,
    outcome?: PvcOutcome,
  ) {
    return this.events.append({
      jobId: job.id,
      type,
      message,
      ...(volume ? { pvc: volume } : {}),
      ...(outcome ? { outcome } : {}),
    });
  }

  private async skip(
    job: PruneJob,
    summary: PruneSummary,
    outcome: PvcOutcome,
  ) {
    summary.skipped.push(outcome);
    await this.append(
      job,
      'volume-skipped',
      `Skipped ${outcome.name}: ${outcome.reason}`,
      outcome.name,
      outcome,
    );
  }

  private async fail(
    job: PruneJob,
    summary: PruneSummary,
    outcome: PvcOutcome,
  ) {
    summary.failed.push(outcome);
    await this.append(
      job,
      'volume-failed',
      `Could not reclaim ${outcome.name}: ${outcome.reason}`,
      outcome.name,
      outcome,
    );
  }

  private async finish(
    job: PruneJob,
    summary: PruneSummary,
    settle: () => Promise<void>,
    ending?: { status: PruneJobStatus; reason?: string },
  ): Promise<PruneResult> {
    await settle();
    const { status, reason } = ending ?? completion(summary);
    const counts = `${summary.deleted.length} ${
      job.dryRun ? 'would be reclaimed' : 'reclaimed'
    }, ${
      summary.terminating.length > 0
        ? `${summary.terminating.length} not seen deleted yet, `
        : ''
    }${summary.skipped.length} skipped, ${summary.failed.length} failed`;
    return this.ending.finish(
      job.id,
      { status, reason, summary, finishedAt: new Date().toISOString() },
      {
        type: 'job-finished',
        status,
        message: `${
          job.dryRun ? 'Dry run of reclaiming' : 'Reclaim'
        } ${status}: ${counts}${reason ? `. ${reason}` : ''}`,
      },
    );
  }
}

/** Whether a patch whose answer was lost went through: the volume is gone, or is this one and now says Delete. */
async function patchWentThrough(
  gateway: KubeGateway,
  seen: SeenVolume,
): Promise<boolean> {
  try {
    const pv = await gateway.readVolume(seen.name);
    return (
      !pv ||
      (pv.metadata?.uid === seen.uid &&
        pv.spec?.persistentVolumeReclaimPolicy === 'Delete')
    );
  } catch {
    return false;
  }
}

/** failed when a volume failed; incomplete when one was not seen deleted; else succeeded. */
function completion(summary: PruneSummary): {
  status: PruneJobStatus;
  reason?: string;
} {
  if (summary.failed.length > 0)
    return {
      status: 'failed',
      reason: summary.failed.map(o => `${o.name}: ${o.reason}`).join('; '),
    };
  if (summary.terminating.length > 0)
    return {
      status: 'incomplete',
      reason: `Not seen deleted yet: ${summary.terminating
        .map(o => o.name)
        .join(', ')}`,
    };
  return { status: 'succeeded' };
}
