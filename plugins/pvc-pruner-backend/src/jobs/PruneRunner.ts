import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import {
  describeFinalizers,
  describeInUse,
  describeKept,
  emptyPruneSummary,
  PruneJob,
  PruneJobStatus,
  PruneSummary,
  PvcOutcome,
  TERMINAL_JOB_STATUSES,
} from 'backstage-plugin-pvc-pruner-common';
import { ConflictError } from '@backstage/errors';
import { JobEvents } from './JobEvents';
import { ClusterRequestError, KubeGateway } from '../kubernetes';
import { HeldLease, LeaseLostError } from './LeaseLock';
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

/** The StatefulSet changed (its watch said so) after a claim's last check: the job stops before that claim's delete. */
class ChangedBeforeDelete extends Error {}

type Confirmed = { name: string; uid: string; ordinal: number };

/** A claim that passed its live check: what to delete, and its outcome so far. */
type Checked = { outcome: PvcOutcome; resourceVersion: string };

const SHUT_DOWN = 'the Backstage instance running this job shut down';
const INTERRUPTED_BY_SHUTDOWN = `Interrupted: ${SHUT_DOWN}; run a new scan`;

/** Live checks of one claim before giving up because each outlasted the lease's proof. */
const MAX_CHECKS = 3;

/** Deletions finish in any order (claims are followed in parallel); report them by ordinal. */
function sortDeleted(summary: PruneSummary) {
  for (const list of [summary.deleted, summary.terminating])
    list.sort(
      (a, b) =>
        (a.ordinal ?? 0) - (b.ordinal ?? 0) || a.name.localeCompare(b.name),
    );
}

/** "x is still terminating, held by f" or "2 claims are still terminating: x (held by f), y (held by g)". */
function describeTerminating(terminating: PvcOutcome[]): string {
  if (terminating.length === 1) {
    const [one] = terminating;
    return `${one.name} is still terminating, ${describeFinalizers(
      one.finalizers ?? [],
    )}`;
  }
  return `${terminating.length} claims are still terminating: ${terminating
    .map(o => `${o.name} (${describeFinalizers(o.finalizers ?? [])})`)
    .join(', ')}`;
}

/** How a job that went through all its claims ended, once every follow-up has settled. */
/** A finished job's status; `failureReason` says why claims failed, when known (a refused user token). */
function completion(
  summary: PruneSummary,
  failureReason?: string,
): {
  status: PruneJobStatus;
  reason?: string;
} {
  const pending =
    summary.terminating.length > 0
      ? `not everything was reclaimed: ${describeTerminating(
          summary.terminating,
        )}`
      : undefined;
  if (summary.failed.length > 0)
    return {
      status: 'failed',
      reason: `${
        failureReason ??
        `${summary.failed.length} claim(s) could not be deleted`
      }${pending ? `; ${pending}` : ''}`,
    };
  if (pending)
    return {
      status: 'incomplete',
      reason: pending.charAt(0).toUpperCase() + pending.slice(1),
    };
  return { status: 'succeeded' };
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

  /**
   * `stop` aborts when the Backstage instance shuts down: the job stops
   * before its next delete, stops following the deletions already accepted,
   * records itself interrupted and releases its Lease.
   */
  async run(
    job: PruneJob,
    gateway: KubeGateway,
    lease: HeldLease,
    stop: AbortSignal = new AbortController().signal,
  ): Promise<PruneResult> {
    const summary = emptyPruneSummary();
    // The job's own heartbeat on its Lease, for as long as it runs. A failed
    // renewal is not fatal by itself: the fence before each delete decides.
    let leaseLost: string | undefined;
    const renewal = setInterval(() => {
      lease.renew().catch(e => {
        if (e instanceof LeaseLostError) leaseLost ??= e.message;
      });
    }, this.options.renewIntervalMs);
    let guard: StatefulSetGuard | undefined;
    const follows: Promise<void>[] = [];
    // Every follow-up ends and the Lease is free before the job says it has
    // finished, so a re-run started on that word is not refused with a 409.
    let settled: Promise<void> | undefined;
    const settle = () =>
      (settled ??= (async () => {
        await Promise.allSettled(follows);
        clearInterval(renewal);
        guard?.stop();
        await lease.release().catch(() => undefined);
      })());
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
        // Ends the job here: the claims not reached yet are skipped, each said so in the log.
        const endHere = async (
          status: PruneJobStatus,
          reason: string,
          why: string,
        ) => {
          await this.announce(
            job,
            this.notAttempted(queue.slice(index), summary, why),
          );
          return this.finish(job, summary, settle, status, reason);
        };
        const ended = await this.endedElsewhere(job.id);
        if (ended) {
          // No events: the log already ended with the other replica's job-finished.
          this.notAttempted(
            queue.slice(index),
            summary,
            `the job was ended elsewhere (${ended.status})`,
          );
          return await this.keepEnding(ended, summary, settle);
        }
        if (stop.aborted) {
          return await endHere(
            'interrupted',
            INTERRUPTED_BY_SHUTDOWN,
            SHUT_DOWN,
          );
        }
        // A refused user token first: every later reason (the watch, the lease) follows from it.
        const abortReason =
          gateway.userTokenRefused?.message ?? guard.abortReason ?? leaseLost;
        if (abortReason) {
          return await endHere(
            'aborted',
            abortReason,
            `the job stopped because ${abortReason}`,
          );
        }
        try {
          await this.pruneOne(
            job,
            gateway,
            guard,
            lease,
            confirmed,
            summary,
            follows,
            stop,
          );
        } catch (e) {
          if (
            !(e instanceof LeaseLostError || e instanceof ChangedBeforeDelete)
          )
            throw e;
          return await endHere(
            'aborted',
            e.message,
            `the job stopped because ${e.message}`,
          );
        }
      }
      await Promise.allSettled(follows);
      // Shut down while following the last deletions: they were not seen to the end.
      if (stop.aborted)
        return await this.finish(
          job,
          summary,
          settle,
          'interrupted',
          INTERRUPTED_BY_SHUTDOWN,
        );
      const { status, reason } = completion(
        summary,
        gateway.userTokenRefused?.message,
      );
      return await this.finish(job, summary, settle, status, reason);
    } catch (e) {
      return await this.finish(
        job,
        summary,
        settle,
        'failed',
        (e as Error).message,
      );
    } finally {
      await settle();
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

  /**
   * Re-checks and deletes one claim; adds the follow-up that tracks its fate
   * to `follows`. Fenced: the job proves it holds its Lease before the live
   * check, and the delete goes out only while that proof is fresh, so a
   * process paused during the check proves it again and checks again.
   * Throws LeaseLostError when it cannot.
   */
  private async pruneOne(
    job: PruneJob,
    gateway: KubeGateway,
    guard: StatefulSetGuard,
    lease: HeldLease,
    confirmed: Confirmed,
    summary: PruneSummary,
    follows: Promise<void>[],
    stop: AbortSignal,
  ): Promise<void> {
    // Announced before the re-check, so that the log names every claim a
    // delete may have gone out for, whatever happens to this process next;
    // and not between the check and the delete, where a database write
    // would be a second round trip in which a pod could start using it unseen.
    await this.events.append({
      jobId: job.id,
      type: 'pvc-deleting',
      pvc: confirmed.name,
      message: `${job.dryRun ? 'Dry run: deleting' : 'Deleting'} ${
        confirmed.name
      } once a last check shows it is still an orphan`,
    });
    let checked: Checked | undefined;
    let sent: 'sent' | { error: unknown };
    for (let attempt = 1; ; attempt++) {
      await lease.confirm();
      checked = await this.recheck(job, gateway, guard, confirmed, summary);
      if (!checked) return;
      if (lease.isFresh()) {
        // Watch events that have already arrived are handled first (two turns
        // of the event loop: one full poll for I/O), so the StatefulSet is as
        // its watch last told, not as it was at the check.
        for (let turn = 0; turn < 2; turn++)
          await new Promise<void>(resolve => setImmediate(resolve));
        if (guard.abortReason) throw new ChangedBeforeDelete(guard.abortReason);
        const result = await this.send(job, gateway, lease, confirmed, checked);
        // Not sent (this process was paused since its check): renew, check again.
        if (result !== 'stale') {
          sent = result;
          break;
        }
      }
      if (attempt === MAX_CHECKS)
        throw new LeaseLostError(
          `the checks before deleting ${confirmed.name} kept outlasting the time a lease renewal can be trusted`,
        );
    }
    const { outcome } = checked;
    const base = {
      name: outcome.name,
      uid: outcome.uid,
      ordinal: outcome.ordinal,
    };
    if (sent !== 'sent') {
      const e = sent.error;
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
      // A lost answer (a timeout, a dropped connection, a process that froze
      // while it was on its way) is not a refused delete: ask the cluster.
      if (
        job.dryRun ||
        !(await this.deletionWentThrough(gateway, job.namespace, confirmed))
      ) {
        await this.fail(job, summary, {
          ...base,
          reason: (e as Error).message,
        });
        return;
      }
    }
    if (job.dryRun) {
      const fate =
        outcome.volume?.reclaimPolicy === 'Retain' ? 'released' : 'deleted';
      await this.deleted(job, summary, {
        ...outcome,
        ...(outcome.volume ? { volume: { ...outcome.volume, fate } } : {}),
      });
      return;
    }
    follows.push(
      this.followUp(job, gateway, summary, outcome, stop).catch(e => {
        // An outcome already recorded stays as recorded: only a log line
        // after it failed, not the deletion.
        const recorded = [...summary.deleted, ...summary.terminating].some(
          o => o.uid === outcome.uid,
        );
        if (!recorded)
          summary.failed.push({
            ...outcome,
            reason: `could not follow the deletion: ${(e as Error).message}`,
          });
      }),
    );
  }

  /**
   * Sends the delete. Its last step, once credentials are applied, is the
   * lease's word: a process paused since its check (SIGSTOP, a long GC) must
   * not send it on the lease's old word, so a stale lease means not sent.
   */
  private async send(
    job: PruneJob,
    gateway: KubeGateway,
    lease: HeldLease,
    confirmed: Confirmed,
    checked: Checked,
  ): Promise<'sent' | 'stale' | { error: unknown }> {
    let stale = false;
    try {
      await gateway.deleteClaim(
        job.namespace,
        confirmed.name,
        { uid: confirmed.uid, resourceVersion: checked.resourceVersion },
        job.dryRun,
        () => {
          stale = !lease.isFresh();
          if (stale) throw new Error('not sent: the lease is no longer fresh');
        },
      );
      return 'sent';
    } catch (error) {
      return stale ? 'stale' : { error };
    }
  }

  /**
   * The live check right before a delete: the claim is the one confirmed
   * (uid) and still an orphan of the StatefulSet as the guard sees it now.
   * Undefined when it was skipped or failed instead (already recorded).
   */
  private async recheck(
    job: PruneJob,
    gateway: KubeGateway,
    guard: StatefulSetGuard,
    confirmed: Confirmed,
    summary: PruneSummary,
  ): Promise<Checked | undefined> {
    const base = {
      name: confirmed.name,
      uid: confirmed.uid,
      ordinal: confirmed.ordinal,
    };
    let claim: V1PersistentVolumeClaim | undefined;
    let reclaimPolicy: string | undefined;
    let verdict;
    try {
      claim = await gateway.readClaim(job.namespace, confirmed.name);
      if (!claim) {
        await this.skip(job, summary, {
          ...base,
          reason: 'it no longer exists',
        });
        return undefined;
      }
      if (claim.metadata?.uid !== confirmed.uid) {
        await this.skip(job, summary, {
          ...base,
          reason:
            'it was deleted and recreated since you confirmed it (uid changed)',
        });
        return undefined;
      }
      const volumeName = claim.spec?.volumeName;
      reclaimPolicy = volumeName
        ? (await gateway.readVolume(volumeName).catch(() => undefined))?.spec
            ?.persistentVolumeReclaimPolicy
        : undefined;
      // Pods and the StatefulSet last, read together: the in-use check is
      // the read closest to the delete, and takes one round trip.
      const [pods] = await Promise.all([
        gateway.listPods(job.namespace, podAsTheRuleReadsIt),
        guard.confirmLive(gateway),
      ]);
      verdict = classifyClaims({
        statefulSet: guard.current,
        claims: [claim],
        pods,
        volumes: new Map(),
      });
    } catch (e) {
      await this.fail(job, summary, { ...base, reason: (e as Error).message });
      return undefined;
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
      return undefined;
    }
    const orphan = verdict.orphans[0];
    const volumeName = claim.spec?.volumeName;
    return {
      resourceVersion: claim.metadata!.resourceVersion!,
      outcome: {
        ...base,
        bytes: orphan.capacityBytes ?? orphan.requestedBytes,
        ...(volumeName
          ? {
              volume: {
                name: volumeName,
                reclaimPolicy,
                fate: 'unknown' as const,
              },
            }
          : {}),
      },
    };
  }

  /** Whether the claim the job confirmed is gone or being deleted: its delete went through though its answer was lost. */
  private async deletionWentThrough(
    gateway: KubeGateway,
    namespace: string,
    confirmed: Confirmed,
  ): Promise<boolean> {
    try {
      const claim = await gateway.readClaim(namespace, confirmed.name);
      return (
        !claim ||
        claim.metadata?.uid !== confirmed.uid ||
        Boolean(claim.metadata?.deletionTimestamp)
      );
    } catch {
      return false;
    }
  }

  private async followUp(
    job: PruneJob,
    gateway: KubeGateway,
    summary: PruneSummary,
    outcome: PvcOutcome,
    stop: AbortSignal,
  ) {
    const fate = await this.follower
      .claimGone(gateway, job.namespace, outcome.name, stop)
      .catch(() => ({ gone: false as const, finalizers: [] }));
    if (!fate.gone) {
      await this.stillTerminating(job, summary, {
        ...outcome,
        finalizers: fate.finalizers,
      });
      return;
    }
    await this.deleted(job, summary, outcome);
    if (!outcome.volume) return;
    const volumeFate = await this.follower
      .volumeFate(
        gateway,
        outcome.volume.name,
        outcome.volume.reclaimPolicy,
        stop,
      )
      .catch(() => 'unknown' as const);
    outcome.volume.fate = volumeFate;
    if (volumeFate === 'deleted') {
      summary.bytesReclaimed += outcome.bytes ?? 0;
      await this.events.append({
        jobId: job.id,
        type: 'volume-deleted',
        pvc: outcome.name,
        message: `Volume ${outcome.volume.name} was deleted (reclaim policy Delete)`,
        outcome,
      });
    } else if (volumeFate === 'released') {
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

  /** Accepted is not deleted: the claim is reported with what holds it, and its disk is not counted. */
  private async stillTerminating(
    job: PruneJob,
    summary: PruneSummary,
    outcome: PvcOutcome,
  ) {
    summary.terminating.push(outcome);
    const finalizers = outcome.finalizers ?? [];
    await this.events.append({
      jobId: job.id,
      type: 'pvc-terminating',
      pvc: outcome.name,
      message:
        finalizers.length > 0
          ? `${outcome.name} is still terminating: ${describeFinalizers(
              finalizers,
            )}; it is not deleted until ${
              finalizers.length === 1
                ? 'that finalizer is'
                : 'those finalizers are'
            } removed`
          : `${outcome.name} is still terminating: its deletion was accepted but not seen to finish`,
      outcome,
    });
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
    settle: () => Promise<void>,
  ): Promise<PruneResult> {
    await settle();
    sortDeleted(summary);
    await this.store.updateJob(ended.id, { summary });
    return { status: ended.status, reason: ended.reason, summary };
  }

  /** Ends the job; without a status, it is decided from the summary once every follow-up has settled. */
  private async finish(
    job: PruneJob,
    summary: PruneSummary,
    settle: () => Promise<void>,
    ending?: PruneJobStatus,
    endingReason?: string,
  ): Promise<PruneResult> {
    await settle();
    sortDeleted(summary);
    const { status, reason } = ending
      ? { status: ending, reason: endingReason }
      : completion(summary);
    const counts = `${summary.deleted.length} ${
      job.dryRun ? 'would be deleted' : 'deleted'
    }, ${
      summary.terminating.length > 0
        ? `${summary.terminating.length} still terminating, `
        : ''
    }${summary.skipped.length} skipped, ${summary.failed.length} failed`;
    try {
      await this.events.finish(
        job.id,
        { status, reason, summary, finishedAt: new Date().toISOString() },
        {
          type: 'job-finished',
          status,
          message: `${job.dryRun ? 'Dry run' : 'Prune'} ${status}: ${counts}${
            reason ? `. ${reason}` : ''
          }`,
        },
      );
    } catch (e) {
      const ended =
        e instanceof ConflictError && (await this.endedElsewhere(job.id));
      if (!ended) throw e;
      return await this.keepEnding(ended, summary, settle);
    }
    return { status, reason, summary };
  }
}
