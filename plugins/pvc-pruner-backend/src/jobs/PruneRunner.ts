import type { V1StatefulSet } from '@kubernetes/client-node';
import {
  describeFinalizers,
  emptyPruneSummary,
  PruneJob,
  PruneJobStatus,
  PruneSummary,
  PvcOutcome,
  TERMINAL_JOB_STATUSES,
} from 'backstage-plugin-pvc-pruner-common';
import { ConflictError } from '@backstage/errors';
import { JobEvents } from './JobEvents';
import { changedSinceChecked, KubeGateway } from '../kubernetes';
import { HeldLease, LeaseLostError } from './LeaseLock';
import { PausedStatefulSets, parseClaimName } from '../orphans';
import { PruneJobStore } from '../database';
import { mapLimited } from '../mapLimited';
import { Confirmed, recheckClaims, Rechecked } from './ClaimRecheck';
import { DeleteGuardFactory, JobRequest } from './DeleteGuard';
import { JobGuards } from './JobGuards';
import {
  BeforeDeleteStep,
  BeforeDeleteStepFactory,
  LastCheck,
} from './BeforeDeleteStep';
import { stopSignal } from './stopSignal';
import { VolumeFollower } from './VolumeFollower';

export interface PruneRunnerOptions {
  /** How often the lease is renewed while the job runs. */
  renewIntervalMs: number;
  /** `pvcPruner.pausedStatefulSets`, as the scans judge by it; `keep` unless told. */
  pausedStatefulSets?: PausedStatefulSets;
}

export interface PruneResult {
  status: PruneJobStatus;
  reason?: string;
  summary: PruneSummary;
}

/** A claim that passed its live check. */
type Checked = Extract<Rechecked, { kind: 'orphan' }>;

/** What became of one delete: sent, refused or lost, not sent for a stale lease, or held back. */
type SendResult = 'sent' | 'stale' | 'held' | { error: unknown };

const SHUT_DOWN = 'the Backstage instance running this job shut down';
const INTERRUPTED_BY_SHUTDOWN = `Interrupted: ${SHUT_DOWN}; run a new scan`;

/** Live checks of one claim before giving up because each outlasted the lease's proof. */
const MAX_CHECKS = 3;

/** Deletes in flight at once, sent lowest ordinal first. */
const DELETE_CONCURRENCY = 8;

/**
 * How old a live check may be when a delete goes out on it (but the first
 * of a batch, the freshest there is): a batch of many claims is checked
 * again before this grows, so one pod list never vouches for long.
 */
const CHECK_FRESH_MS = 1000;

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

/** "x was not deleted: why" for the claims a step held back, one sentence each. */
function describeWithheld(withheld: PvcOutcome[]): string {
  return withheld.map(o => `${o.name} was not deleted: ${o.reason}`).join('; ');
}

/**
 * A finished job's status, once every follow-up has settled; `failureReason`
 * says why claims failed, when known (a refused user token). Claims a step
 * held back (`withheld`: a snapshot that failed) leave it incomplete.
 */
function completion(
  summary: PruneSummary,
  failureReason?: string,
  withheld: PvcOutcome[] = [],
): {
  status: PruneJobStatus;
  reason?: string;
} {
  const notDone = [
    summary.terminating.length > 0
      ? describeTerminating(summary.terminating)
      : undefined,
    withheld.length > 0 ? describeWithheld(withheld) : undefined,
  ].filter(Boolean);
  const pending =
    notDone.length > 0
      ? `not everything was reclaimed: ${notDone.join('; ')}`
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
 * Runs one prune job: watches the StatefulSet (and whatever its guards
 * watch), re-checks the confirmed claims right before deleting them, with
 * one pod list for all of them, deletes lowest ordinal first with uid +
 * resourceVersion preconditions, then follows each claim and its volume.
 * With dryRun every write carries dryRun=All.
 */
export class PruneRunner {
  constructor(
    private readonly store: PruneJobStore,
    private readonly events: JobEvents,
    private readonly follower: VolumeFollower,
    private readonly options: PruneRunnerOptions,
    /** The guards of other concerns (ownership, …), started with each job. */
    private readonly guardFactories: DeleteGuardFactory[] = [],
    /** What other concerns do for each claim before its last check (a snapshot, …), in this order. */
    private readonly stepFactories: BeforeDeleteStepFactory[] = [],
  ) {}

  /**
   * `stop` aborts when the Backstage instance shuts down: the job stops
   * before its next delete, stops following the deletions already accepted,
   * records itself interrupted and releases its Lease. `request` is what the
   * guards check the job against (who asked, through which entity).
   */
  async run(
    job: PruneJob,
    gateway: KubeGateway,
    lease: HeldLease,
    stop: AbortSignal = new AbortController().signal,
    request?: JobRequest,
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
    let guards: JobGuards | undefined;
    // What the steps wait on: the instance shutting down, the Lease lost, or a guard's reason to stop.
    const halt = stopSignal(
      stop,
      () =>
        gateway.userTokenRefused?.message ?? guards?.abortReason ?? leaseLost,
    );
    const follows: Promise<void>[] = [];
    // Every follow-up ends and the Lease is free before the job says it has
    // finished, so a re-run started on that word is not refused with a 409.
    let settled: Promise<void> | undefined;
    const settle = () =>
      (settled ??= (async () => {
        await Promise.allSettled(follows);
        clearInterval(renewal);
        halt.dispose();
        guards?.stop();
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
      guards = await JobGuards.start(
        job,
        gateway,
        this.guardFactories,
        request,
      );
      const steps = this.stepFactories.flatMap(
        f => f.start({ job, gateway, request }) ?? [],
      );
      /** What the steps added to each claim they let through. */
      const notes = new Map<string, Partial<PvcOutcome>>();
      /** The steps' last checks of each claim they let through, asked right before its delete. */
      const lastChecks = new Map<string, LastCheck[]>();
      // A step's work is checked and deleted a batch at a time, not left waiting for the whole job's.
      const batchSize = Math.min(Infinity, ...steps.map(s => s.batchSize));
      /** Claims a step held back: not deleted, and the job is incomplete. */
      const withheld: PvcOutcome[] = [];
      const checks = new Map<string, number>();
      const announced = new Set<string>();
      let pending = this.order(job, guards.statefulSet, summary);
      // A change the last check saw ends the job, even when it left nothing to delete.
      let changedAtCheck: string | undefined;
      while (pending.length > 0 || changedAtCheck) {
        const rest = pending;
        // Ends the job here: the claims not deleted yet are skipped, each said so in the log.
        const endHere = async (
          status: PruneJobStatus,
          reason: string,
          why: string,
        ) => {
          await this.announce(job, this.notAttempted(rest, summary, why));
          return this.finish(job, summary, settle, status, reason);
        };
        const ended = await this.endedElsewhere(job.id);
        if (ended) {
          // No events: the log already ended with the other replica's job-finished.
          this.notAttempted(
            rest,
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
          gateway.userTokenRefused?.message ??
          guards.abortReason ??
          changedAtCheck ??
          leaseLost;
        if (abortReason) {
          return await endHere(
            'aborted',
            abortReason,
            `the job stopped because ${abortReason}`,
          );
        }
        try {
          const next = rest.slice(0, batchSize);
          const later = rest.slice(next.length);
          const ready = await this.prepare(job, steps, next, {
            notes,
            lastChecks,
            withheld,
            summary,
            stop: halt.signal,
          });
          // The steps were cut short: the job ends at the top of the loop, on the reason.
          if (halt.signal.aborted) {
            if (!stop.aborted)
              changedAtCheck ??= (halt.signal.reason as Error).message;
            pending = [...ready, ...later];
            continue;
          }
          if (ready.length === 0) {
            pending = later;
            continue;
          }
          let again: Confirmed[];
          ({ again, changedAtCheck } = await this.pruneBatch(
            job,
            gateway,
            guards,
            lease,
            {
              claims: ready,
              announced,
              checks,
              notes,
              lastChecks,
              withheld,
              summary,
              follows,
              stop,
            },
          ));
          pending = [...again, ...later];
        } catch (e) {
          if (!(e instanceof LeaseLostError)) throw e;
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
        withheld,
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
    statefulSet: V1StatefulSet,
    summary: PruneSummary,
  ): Confirmed[] {
    const queue: Confirmed[] = [];
    for (const pvc of job.pvcs) {
      const parsed = parseClaimName(pvc.name, statefulSet);
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

  /**
   * Runs the steps (a snapshot, …) on the claims not yet through them, each
   * once per job, and returns those every step let through, in their order.
   * A claim a step holds back is skipped with its reason, and withheld.
   */
  private async prepare(
    job: PruneJob,
    steps: BeforeDeleteStep[],
    claims: Confirmed[],
    batch: {
      notes: Map<string, Partial<PvcOutcome>>;
      lastChecks: Map<string, LastCheck[]>;
      withheld: PvcOutcome[];
      summary: PruneSummary;
      stop: AbortSignal;
    },
  ): Promise<Confirmed[]> {
    const { notes } = batch;
    let todo = claims.filter(c => !notes.has(c.name));
    const found = new Map<string, Partial<PvcOutcome>>();
    for (const step of steps) {
      if (todo.length === 0) break;
      const results = await step.prepare(todo, batch.stop);
      todo = [];
      for (const r of results) {
        const note = { ...found.get(r.confirmed.name), ...r.outcome };
        found.set(r.confirmed.name, note);
        if (r.kind === 'ready') {
          todo.push(r.confirmed);
          if (r.lastCheck) {
            const name = r.confirmed.name;
            batch.lastChecks.set(name, [
              ...(batch.lastChecks.get(name) ?? []),
              r.lastCheck,
            ]);
          }
          continue;
        }
        const outcome = { ...note, ...r.confirmed, reason: r.reason };
        batch.withheld.push(outcome);
        await this.skip(job, batch.summary, outcome);
      }
    }
    for (const c of todo) notes.set(c.name, found.get(c.name) ?? {});
    return claims.filter(c => notes.has(c.name));
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
   * Re-checks claims and deletes those still orphans; adds the follow-ups
   * that track their fate to `follows`, and returns the claims to check
   * again (a delete held back), and what changed that the check saw (a guard's
   * reason to stop). Fenced: the job proves it holds its Lease
   * before the live check, and each delete goes out only while that proof
   * is fresh, so a process paused since the check proves it again and
   * checks again. Throws LeaseLostError when it cannot.
   */
  private async pruneBatch(
    job: PruneJob,
    gateway: KubeGateway,
    guards: JobGuards,
    lease: HeldLease,
    batch: {
      claims: Confirmed[];
      /** Claims already named in the log as being deleted. */
      announced: Set<string>;
      /** Live checks per claim so far. */
      checks: Map<string, number>;
      /** What the steps added to each claim's outcome. */
      notes: Map<string, Partial<PvcOutcome>>;
      /** The steps' last checks, asked with the re-check. */
      lastChecks: ReadonlyMap<string, LastCheck[]>;
      /** Claims a step's last check held back. */
      withheld: PvcOutcome[];
      summary: PruneSummary;
      follows: Promise<void>[];
      stop: AbortSignal;
    },
  ): Promise<{ again: Confirmed[]; changedAtCheck?: string }> {
    const { claims, summary } = batch;
    // Announced before the re-check, so that the log names every claim a
    // delete may have gone out for, whatever happens to this process next;
    // and not between the check and the delete, where a database write
    // would be a round trip in which a pod could start using it unseen.
    for (const confirmed of claims) {
      if (batch.announced.has(confirmed.name)) continue;
      batch.announced.add(confirmed.name);
      await this.events.append({
        jobId: job.id,
        type: 'pvc-deleting',
        pvc: confirmed.name,
        message: `${job.dryRun ? 'Dry run: deleting' : 'Deleting'} ${
          confirmed.name
        } once a last check shows it is still an orphan`,
      });
    }
    await lease.confirm();
    const rechecked = await recheckClaims(
      job.namespace,
      gateway,
      guards,
      claims,
      this.options.pausedStatefulSets ?? 'keep',
      batch.lastChecks,
    );
    const changedAtCheck = guards.abortReason;
    const checked = rechecked.filter((r): r is Checked => r.kind === 'orphan');
    for (const r of checked)
      Object.assign(r.outcome, batch.notes.get(r.confirmed.name));
    const sent = await this.sendAll(
      job,
      gateway,
      lease,
      guards,
      checked,
      batch.stop,
    );
    // A refused user token stops the job: what it refused is not done, nor failed on its own account.
    const refusedToken = gateway.userTokenRefused;
    const again: Confirmed[] = [];
    // Written only now: no database write sits between the check and a delete.
    for (const r of rechecked) {
      if (r.kind === 'orphan') continue;
      const outcome = {
        ...batch.notes.get(r.confirmed.name),
        ...r.confirmed,
        reason: r.reason,
      };
      if (r.kind === 'held') {
        batch.withheld.push(outcome);
        await this.skip(job, summary, outcome);
      } else if (r.kind === 'skip') await this.skip(job, summary, outcome);
      else if (refusedToken) again.push(r.confirmed);
      else await this.fail(job, summary, outcome);
    }
    let outlasted: string | undefined;
    for (const [i, r] of checked.entries()) {
      const result = sent[i];
      const refused =
        typeof result === 'object' && result.error === refusedToken;
      if (result === 'held' || (refusedToken && refused)) {
        again.push(r.confirmed);
      } else if (result === 'stale') {
        const checks = (batch.checks.get(r.confirmed.name) ?? 0) + 1;
        batch.checks.set(r.confirmed.name, checks);
        if (checks >= MAX_CHECKS) outlasted ??= r.confirmed.name;
        again.push(r.confirmed);
      } else {
        await this.afterSend(job, gateway, r, result, batch);
      }
    }
    if (outlasted)
      throw new LeaseLostError(
        `the checks before deleting ${outlasted} kept outlasting the time a lease renewal can be trusted`,
      );
    return { again, changedAtCheck };
  }

  /**
   * Sends the deletes of checked claims, lowest ordinal first, a few at a
   * time. None goes out once a guard has seen a change, the instance shuts
   * down, or (but for the first) the check is older than CHECK_FRESH_MS:
   * those are held back, to be checked again.
   */
  private async sendAll(
    job: PruneJob,
    gateway: KubeGateway,
    lease: HeldLease,
    guards: JobGuards,
    checked: Checked[],
    stop: AbortSignal,
  ): Promise<SendResult[]> {
    if (checked.length === 0) return [];
    if (!lease.isFresh()) return checked.map(() => 'stale');
    // Watch events that have already arrived are handled first (two turns
    // of the event loop: one full poll for I/O), so the StatefulSet is as
    // its watch last told, not as it was at the check.
    for (let turn = 0; turn < 2; turn++)
      await new Promise<void>(resolve => setImmediate(resolve));
    const checkedAt = performance.now();
    let first = true;
    return mapLimited(checked, DELETE_CONCURRENCY, async r => {
      if (guards.abortReason || stop.aborted || gateway.userTokenRefused)
        return 'held';
      if (!first && performance.now() - checkedAt > CHECK_FRESH_MS)
        return 'held';
      first = false;
      return this.send(job, gateway, lease, r);
    });
  }

  /**
   * Sends one delete. Its last step, once credentials are applied, is the
   * lease's word: a process paused since its check (SIGSTOP, a long GC) must
   * not send it on the lease's old word, so a stale lease means not sent.
   */
  private async send(
    job: PruneJob,
    gateway: KubeGateway,
    lease: HeldLease,
    checked: Checked,
  ): Promise<SendResult> {
    let stale = false;
    try {
      await gateway.deleteClaim(
        job.namespace,
        checked.confirmed.name,
        {
          uid: checked.confirmed.uid,
          resourceVersion: checked.resourceVersion,
        },
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

  /** Records what a sent delete did, and starts following a real one to its end. */
  private async afterSend(
    job: PruneJob,
    gateway: KubeGateway,
    checked: Checked,
    sent: 'sent' | { error: unknown },
    batch: {
      notes: Map<string, Partial<PvcOutcome>>;
      summary: PruneSummary;
      follows: Promise<void>[];
      stop: AbortSignal;
    },
  ): Promise<void> {
    const { summary } = batch;
    const { outcome, confirmed } = checked;
    const base = {
      ...batch.notes.get(outcome.name),
      name: outcome.name,
      uid: outcome.uid,
      ordinal: outcome.ordinal,
    };
    if (sent !== 'sent') {
      const e = sent.error;
      const changed = changedSinceChecked(e);
      if (changed) {
        await this.skip(job, summary, {
          ...base,
          reason: `it changed after it was checked (${changed}), so it was not deleted`,
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
    batch.follows.push(
      this.followUp(job, gateway, summary, outcome, batch.stop).catch(e => {
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
