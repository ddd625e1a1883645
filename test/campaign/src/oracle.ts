/**
 * The oracle: judges a scenario from the simulator's own history, the
 * cluster's final state and what the campaign itself sent, never from the
 * plugin's word about what it did.
 */
import type { KubeObject, LeaseWrite, RecordedRequest } from 'kube-sim';
import type { PruneEvent } from 'backstage-plugin-pvc-pruner-common';
import { JOB_END_BOUND_MS, JobRecord, ScenarioRun } from './runScenario';

/** The invariants; every count must be 0. */
export const INVARIANTS = [
  'in-use-claim-deleted',
  'delete-without-live-check',
  'check-to-delete-window-over-one-round-trip',
  'unconfirmed-claim-deleted',
  'delete-without-holding-the-lease',
  'lease-taken-while-held',
  'job-did-not-end',
  'event-log-not-whole',
  'event-log-disagrees-with-cluster',
  'event-log-differs-between-replicas',
  'prune-without-audit-event',
  'harness',
] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Violation {
  invariant: Invariant;
  detail: string;
}

/**
 * From the moment the API server answered the plugin's last live check (the
 * pod list) to the moment the plugin sent its delete, there is room for one
 * round trip: the answer's way back, the client's own work, the delete's way
 * in. Judged by what the API server saw: no other request about the claim
 * (the claim, its volume) in between. The window itself, and a round trip
 * measured in the same re-check, are reported as figures: on a shared
 * machine a process can wait for a core longer than a round trip, so a
 * timing bound would judge the machine, not the plugin.
 */
/** One client round trip of the re-check: claim read served → next read served (a volume read between counts as one more), injected latency taken out. */
function roundTripOfRecheck(
  before: RecordedRequest[],
  claimRead: RecordedRequest,
  podList: RecordedRequest,
): number | undefined {
  if (podList.seq < claimRead.seq) return undefined;
  const volumeRead = before.find(
    r =>
      r.seq > claimRead.seq &&
      r.seq < podList.seq &&
      r.verb === 'get' &&
      r.resource === 'persistentvolumes',
  );
  const hops = volumeRead ? 2 : 1;
  return (
    (podList.at -
      podList.injectedLatencyMs -
      (volumeRead?.injectedLatencyMs ?? 0) -
      claimRead.at) /
    hops
  );
}

export interface Judgement {
  violations: Violation[];
  /** Successful claim deletions (dry runs excluded). */
  deletions: number;
  /** Last live re-check → delete sent, per deletion, ms. */
  windowsMs: number[];
  /** The round trip measured in the same re-check, per deletion, ms. */
  roundTripsMs: number[];
  /** Deletions whose claim became in use after the delete was sent (network delay): no one can see that coming. */
  inUseDuringFlight: number;
  /**
   * Deletions whose claim became in use after the plugin's last check read
   * what would show it (its pod list, its live read of the StatefulSet) but
   * before the delete was sent: the check-to-delete window.
   */
  inUseAfterLastCheck: number;
  /** Deletions whose outcome the job's own process could not log: killed, or frozen while its job was ended as interrupted. */
  lostWithKilledReplica: number;
  jobsByStatus: Record<string, number>;
  jobDurationsMs: number[];
}

const ok = (r: RecordedRequest) => r.status !== undefined && r.status < 300;

function holderJob(lease?: KubeObject): string | undefined {
  return lease?.metadata.annotations?.['pvc-pruner.backstage.io/job-id'];
}

/** When the Lease runs out, by its own timestamps. */
function leaseExpiry(lease: KubeObject): number {
  const renewed = lease.spec?.renewTime ?? lease.spec?.acquireTime;
  return renewed
    ? Date.parse(renewed) + (lease.spec?.leaseDurationSeconds ?? 0) * 1000
    : 0;
}

/** Each Lease of the namespace as it stood just before request `seq`. */
/** Whether the StatefulSet, as it was when the delete arrived, names the claim by one of its templates and an ordinal. */
function namesByOrdinal(
  d: ScenarioRun['deletions'][number],
  statefulSet: string,
): boolean {
  const sts = d.statefulSets.find(s => s.name === statefulSet);
  const name = d.request.name ?? '';
  return Boolean(
    sts?.templates.some(t => {
      const prefix = `${t}-${statefulSet}-`;
      return (
        name.startsWith(prefix) &&
        /^(0|[1-9][0-9]*)$/.test(name.slice(prefix.length))
      );
    }),
  );
}

function leasesBefore(writes: LeaseWrite[], seq: number) {
  const state = new Map<string, KubeObject | undefined>();
  for (const w of writes) {
    if (w.request.seq >= seq || !ok(w.request) || w.request.dryRun) continue;
    state.set(w.request.name ?? w.after?.metadata.name ?? '', w.after);
  }
  return [...state.values()].filter((l): l is KubeObject => Boolean(l));
}

/**
 * Why a deleted claim was in use, for each reason the plugin's last check
 * could have seen. The last check starts with the plugin's last read of the
 * claim; a pod that existed when that check's pod list was served, or an
 * ordinal its StatefulSet ran when that check's read of the StatefulSet was
 * served, was there to see. A reason the last check did not read at all
 * counts as seeable.
 */
function inUseAtLastCheck(
  d: ScenarioRun['deletions'][number],
  before: RecordedRequest[],
  ns: string,
): string[] {
  const checkStart = before
    .filter(
      r =>
        r.verb === 'get' &&
        r.resource === 'persistentvolumeclaims' &&
        r.name === d.request.name,
    )
    .pop()?.seq;
  const lastServed = (match: (r: RecordedRequest) => boolean) =>
    checkStart === undefined
      ? undefined
      : before
          .filter(r => r.seq > checkStart && r.namespace === ns && match(r))
          .pop()?.at;
  const podsListed = lastServed(
    r => r.verb === 'list' && r.resource === 'pods',
  );
  const stsRead = (name: string) =>
    lastServed(
      r =>
        r.resource === 'statefulsets' &&
        (r.verb === 'list' || (r.verb === 'get' && r.name === name)),
    );
  const ago = (at?: number) =>
    at === undefined
      ? 'not read in its last check'
      : `last read ${(d.request.at - at).toFixed(
          0,
        )} ms before the delete was served`;
  return [
    ...d.pods
      .filter(p => podsListed === undefined || p.since <= podsListed)
      .map(
        p =>
          `pod ${p.name}${p.terminating ? ' (terminating)' : ''} (pods ${ago(
            podsListed,
          )})`,
      ),
    ...d.runningOrdinalOf
      .filter(r => {
        const read = stsRead(r.statefulSet);
        return read === undefined || r.since <= read;
      })
      .map(
        r =>
          `ordinal ${r.ordinal} of StatefulSet ${r.statefulSet} (running for ${(
            d.request.at - r.since
          ).toFixed(0)} ms; the StatefulSet ${ago(stsRead(r.statefulSet))})`,
      ),
  ];
}

function sameLog(a: PruneEvent[], b: PruneEvent[]) {
  const shape = (events: PruneEvent[]) =>
    JSON.stringify(
      events.map(e => [e.seq, e.type, e.pvc ?? '', e.status ?? '']),
    );
  return shape(a) === shape(b);
}

export function judge(run: ScenarioRun): Judgement {
  const violations: Violation[] = [];
  const flag = (invariant: Invariant, detail: string) =>
    violations.push({ invariant, detail });
  const windowsMs: number[] = [];
  const roundTripsMs: number[] = [];
  let inUseDuringFlight = 0;
  let inUseAfterLastCheck = 0;
  const lost = { withKilledReplica: 0 };
  let deletions = 0;
  const ns = run.scenario.namespace;

  for (const error of run.harnessErrors) flag('harness', error);

  /** Deletions each job made, by the simulator's record. */
  const deletedBy = new Map<string, Set<string>>();

  for (const d of run.deletions) {
    const replica = run.replicaOfUser.get(d.request.user ?? '');
    if (replica === undefined || !ok(d.request) || d.request.dryRun || !d.claim)
      continue;
    if (d.claim.terminating) continue; // already deleted by someone: this one changed nothing
    deletions++;
    const name = d.request.name!;
    // Sent no later than the server began to receive it; injected latency and
    // the server's own queueing after that count as the wire. A request the
    // server took in while its sender was stopped (SIGSTOP) was sent before
    // the stop: the simulator, in this busy process, read it late.
    const receivedAt =
      d.request.receivedAt ?? d.request.at - d.request.injectedLatencyMs;
    const stoppedSender = run.freezes.find(
      f => f.replica === replica && f.from <= receivedAt && receivedAt <= f.to,
    );
    const sentAt = stoppedSender ? stoppedSender.from : receivedAt;
    const whenSent = (() => {
      const freeze = run.freezes.find(f => f.replica === replica);
      if (!freeze) return '';
      if (stoppedSender)
        return `; taken in ${(receivedAt - freeze.from).toFixed(
          0,
        )} ms into its replica's SIGSTOP, so sent before it`;
      return receivedAt > freeze.to
        ? `; sent ${(receivedAt - freeze.to).toFixed(
            0,
          )} ms after its replica was resumed from SIGSTOP`
        : `; sent ${(freeze.from - receivedAt).toFixed(
            0,
          )} ms before its replica's SIGSTOP`;
    })();

    const before = run.requests.filter(
      r => r.user === d.request.user && r.seq < d.request.seq && ok(r),
    );

    // 1. Never in use where the plugin's last check could see it. What began
    // after the read that would have shown it (the check-to-delete window) or
    // while the delete travelled is counted: no client can see that coming.
    if (d.inUse) {
      const seeable = inUseAtLastCheck(d, before, ns);
      if (seeable.length > 0)
        flag(
          'in-use-claim-deleted',
          `${name} (uid ${
            d.claim.uid
          }) was deleted by replica ${replica} while in use since ${(
            sentAt - (d.inUseSince ?? 0)
          ).toFixed(0)} ms before the delete was sent: ${seeable.join(', ')}`,
        );
      else if ((d.inUseSince ?? 0) < sentAt) inUseAfterLastCheck++;
      else inUseDuringFlight++;
    }

    // 2. The last live re-check (claim, then pods), and how long before the delete was sent.
    const lastClaimRead = before
      .filter(
        r =>
          r.verb === 'get' &&
          r.resource === 'persistentvolumeclaims' &&
          r.name === name,
      )
      .pop();
    const lastPodList = before
      .filter(
        r => r.verb === 'list' && r.resource === 'pods' && r.namespace === ns,
      )
      .pop();
    if (!lastClaimRead || !lastPodList) {
      flag(
        'delete-without-live-check',
        `${name}: no live read of the claim and its pods before the delete`,
      );
    } else {
      // The pods are the in-use evidence (a claim's uid and version are held by the delete's preconditions).
      const lastCheck = lastPodList.at;
      const window = sentAt - lastCheck;
      windowsMs.push(window);
      const roundTrip = roundTripOfRecheck(before, lastClaimRead, lastPodList);
      if (roundTrip !== undefined) roundTripsMs.push(roundTrip);
      // Nothing about this claim may travel between its last check and its delete.
      const between = before.filter(
        r =>
          r.seq > lastPodList.seq &&
          r.namespace === ns &&
          r.resource === 'persistentvolumeclaims' &&
          r.name === name,
      );
      const volumeReads = before.filter(
        r =>
          r.seq > lastPodList.seq &&
          r.verb === 'get' &&
          r.resource === 'persistentvolumes' &&
          r.name !== undefined &&
          d.claim!.volumeName === r.name,
      );
      if (between.length + volumeReads.length > 0)
        flag(
          'check-to-delete-window-over-one-round-trip',
          `${name}: ${[...between, ...volumeReads]
            .map(r => `${r.verb} ${r.resource}${r.name ? `/${r.name}` : ''}`)
            .join(
              ', ',
            )} between its last check and its delete (${window.toFixed(
            0,
          )} ms; a round trip of its re-check took ${
            roundTrip?.toFixed(0) ?? 'n/a'
          } ms)`,
        );
    }

    // 3. Confirmed by the user for a job on that replica: name and uid.
    const candidates = run.jobs.filter(
      j =>
        j.replica === replica &&
        !j.dryRun &&
        j.sentAt <= d.request.at &&
        j.confirmed.some(c => c.name === name && c.uid === d.claim!.uid),
    );
    const pending = run.sent.filter(
      s =>
        s.replica === replica &&
        s.outcome.kind === 'unknown' &&
        !s.plan.dryRun &&
        s.confirmed.some(c => c.name === name && c.uid === d.claim!.uid),
    );
    // Several jobs may have confirmed it (a careless confirmation of a sibling's
    // claim): of those holding a Lease when the delete arrived, the one whose
    // StatefulSet names the claim by an ordinal did it.
    const leases = leasesBefore(run.leaseWrites, d.request.seq);
    const holding = candidates.filter(c =>
      leases.some(l => holderJob(l) === c.id),
    );
    const job =
      holding.find(c => namesByOrdinal(d, c.statefulSet)) ??
      holding[0] ??
      candidates[candidates.length - 1];
    if (!job && pending.length === 0) {
      flag(
        'unconfirmed-claim-deleted',
        `${name} (uid ${d.claim.uid}) was deleted by replica ${replica}, but no prune sent there confirmed that uid`,
      );
      continue;
    }
    if (!job) continue;
    if (!deletedBy.has(job.id)) deletedBy.set(job.id, new Set());
    deletedBy.get(job.id)!.add(`${name}/${d.claim.uid}`);

    // 4. Acting only while holding the StatefulSet's Lease, live by its own timestamps when the delete was sent.
    const held = leases.find(l => holderJob(l) === job.id);
    if (!held)
      flag(
        'delete-without-holding-the-lease',
        `${name}: job ${job.id} deleted it without holding a Lease`,
      );
    else if (leaseExpiry(held) < sentAt)
      flag(
        'delete-without-holding-the-lease',
        `${name}: job ${job.id} deleted it ${(
          sentAt - leaseExpiry(held)
        ).toFixed(0)} ms after its Lease had expired${whenSent}`,
      );
  }

  // 5. A Lease changes hands only once it has expired (or was released).
  for (const w of run.leaseWrites) {
    if (!ok(w.request) || w.request.dryRun || w.request.verb === 'delete')
      continue;
    const from = holderJob(w.before);
    const to = holderJob(w.after);
    if (w.before && from !== to && leaseExpiry(w.before) > w.request.at)
      flag(
        'lease-taken-while-held',
        `Lease ${w.request.name}: job ${to} took it from job ${from}, ${(
          leaseExpiry(w.before) - w.request.at
        ).toFixed(0)} ms before it expired`,
      );
  }
  for (const w of run.leaseWrites) {
    if (!ok(w.request) || w.request.verb !== 'delete' || w.request.dryRun)
      continue;
    const owner = run.jobs.find(j => j.id === holderJob(w.before));
    const by = run.replicaOfUser.get(w.request.user ?? '');
    if (owner && by !== undefined && owner.replica !== by)
      flag(
        'lease-taken-while-held',
        `Lease ${w.request.name} of job ${owner.id} (replica ${owner.replica}) was deleted by replica ${by}`,
      );
  }

  const jobsByStatus: Record<string, number> = {};
  const jobDurationsMs: number[] = [];
  for (const job of run.jobs) {
    // 6. Every job ends.
    if (!job.final) {
      flag(
        'job-did-not-end',
        `job ${job.id} (replica ${job.replica}) did not end within ${
          JOB_END_BOUND_MS / 1000
        } s`,
      );
      continue;
    }
    jobsByStatus[job.final.status] = (jobsByStatus[job.final.status] ?? 0) + 1;
    if (job.final.createdAt && job.final.finishedAt)
      jobDurationsMs.push(
        Date.parse(job.final.finishedAt) - Date.parse(job.final.createdAt),
      );
    judgeLog(
      run,
      job,
      deletedBy.get(job.id) ?? new Set(),
      flag,
      () => lost.withKilledReplica++,
    );
    judgeAudit(run, job, flag);
  }
  // Every answered request has its audit event, accepted or refused.
  for (const s of run.sent) {
    if (s.outcome.kind === 'unknown') continue;
    const initiated = run.audit.filter(
      a =>
        a.replica === s.replica &&
        a.status === 'initiated' &&
        a.meta?.statefulSet === s.plan.statefulSet,
    ).length;
    const sentThere = run.sent.filter(
      x =>
        x.replica === s.replica &&
        x.plan.statefulSet === s.plan.statefulSet &&
        x.outcome.kind !== 'unknown',
    ).length;
    if (initiated < sentThere)
      flag(
        'prune-without-audit-event',
        `replica ${s.replica}: ${sentThere} prune request(s) for ${s.plan.statefulSet}, ${initiated} audit event(s)`,
      );
  }

  return {
    violations: dedupe(violations),
    deletions,
    windowsMs,
    roundTripsMs,
    inUseDuringFlight,
    inUseAfterLastCheck,
    lostWithKilledReplica: lost.withKilledReplica,
    jobsByStatus,
    jobDurationsMs,
  };
}

function dedupe(violations: Violation[]) {
  const seen = new Set<string>();
  return violations.filter(v => {
    const key = `${v.invariant}|${v.detail}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function judgeLog(
  run: ScenarioRun,
  job: JobRecord,
  deleted: Set<string>,
  flag: (i: Invariant, d: string) => void,
  lost: () => void,
) {
  const logs = [...job.eventsByReplica.entries()];
  const first = logs.find(([, l]) => !(l instanceof Error));
  if (!first) {
    flag(
      'event-log-not-whole',
      `job ${job.id}: no replica served its event log`,
    );
    return;
  }
  const events = first[1] as PruneEvent[];
  for (const [replica, log] of logs) {
    if (log instanceof Error)
      flag(
        'event-log-differs-between-replicas',
        `job ${job.id}: replica ${replica} could not serve it (${log.message})`,
      );
    else if (!sameLog(events, log))
      flag(
        'event-log-differs-between-replicas',
        `job ${job.id}: replica ${replica} serves ${log.length} events, replica ${first[0]} ${events.length}`,
      );
  }
  const gaps = events.findIndex((e, i) => e.seq !== i + 1);
  if (gaps >= 0)
    flag(
      'event-log-not-whole',
      `job ${job.id}: event ${gaps} has seq ${events[gaps].seq}`,
    );
  const finished = events.filter(e => e.type === 'job-finished');
  if (
    finished.length !== 1 ||
    events[events.length - 1]?.type !== 'job-finished'
  )
    flag(
      'event-log-not-whole',
      `job ${job.id}: ${finished.length} job-finished event(s)${
        events.length ? `, last is ${events[events.length - 1].type}` : ''
      }`,
    );
  else if (finished[0].status !== job.final!.status)
    flag(
      'event-log-not-whole',
      `job ${job.id}: job-finished says ${finished[0].status}, the job ${
        job.final!.status
      }`,
    );
  if (job.dryRun) return;

  // Every claim it calls deleted is gone…
  const live = new Map(run.finalClaims.map(c => [c.metadata.uid, c]));
  for (const e of events) {
    if (e.type !== 'pvc-deleted') continue;
    const uid =
      e.outcome?.uid ?? job.confirmed.find(c => c.name === e.pvc)?.uid;
    const still = uid ? live.get(uid) : undefined;
    if (still)
      flag(
        'event-log-disagrees-with-cluster',
        `job ${job.id} calls ${e.pvc} deleted, but it still exists${
          still.metadata.deletionTimestamp
            ? ` (Terminating, finalizers ${(
                still.metadata.finalizers ?? []
              ).join(', ')})`
            : ''
        }`,
      );
  }
  // …and every claim it deleted is in it.
  const mentioned = new Set(
    events
      .filter(
        e =>
          e.pvc &&
          !['pvc-skipped', 'pvc-failed', 'pvc-deleting'].includes(e.type),
      )
      .map(e => e.pvc!),
  );
  for (const key of deleted) {
    const name = key.split('/')[0];
    if (mentioned.has(name)) continue;
    // A job its process could not finish (killed, or frozen while another
    // replica ended it as interrupted) cannot log the outcome; its log must
    // still name the claim as being deleted, and end telling the user to check.
    const announced = events.some(
      e => e.type === 'pvc-deleting' && e.pvc === name,
    );
    if (announced && job.final!.status === 'interrupted') lost();
    else
      flag(
        'event-log-disagrees-with-cluster',
        `job ${
          job.id
        } deleted ${name} (the API server's record), but its log says ${
          events
            .filter(e => e.pvc === name)
            .map(e => `${e.type} ("${e.message}")`)
            .join(', ') || 'nothing'
        } about it; the job ended ${job.final!.status}${
          job.final!.reason ? ` (${job.final!.reason})` : ''
        }`,
      );
  }
}

function judgeAudit(
  run: ScenarioRun,
  job: JobRecord,
  flag: (i: Invariant, d: string) => void,
) {
  if (job.replicaKilled) return; // the process that would have written it is gone
  const closing = run.audit.some(
    a =>
      a.replica === job.replica &&
      a.status !== 'initiated' &&
      a.meta?.jobId === job.id,
  );
  if (!closing && job.final?.status !== 'interrupted')
    flag(
      'prune-without-audit-event',
      `job ${job.id} (${job.final?.status}) has no closing audit event on replica ${job.replica}`,
    );
}
