/**
 * The oracle: judges a scenario from the simulator's own history, the
 * cluster's final state and what the campaign itself sent, never from the
 * plugin's word about what it did.
 */
import type {
  ClaimDeletion,
  KubeObject,
  LeaseWrite,
  RecordedRequest,
  SnapshotRecord,
} from 'kube-sim';
import type { PruneEvent } from 'backstage-plugin-pvc-pruner-common';
import {
  AutoPruneFigures,
  emptyAutoPruneFigures,
  exposures,
  judgeAutomaticDeletion,
  judgeAwaited,
  mayName,
} from './autoPruneOracle';
import { CLUSTER } from './backendClient';
import { demoPolicy, PolicyModel, pruneRefusals } from './ownership';
import { ordinalNaming, reattachingStatefulSets } from './reattach';
import { judgeReclaims, ReclaimFigures } from './reclaimOracle';
import { JOB_END_BOUND_MS } from './polling';
import { JobRecord, ScenarioRun } from './runScenario';

/** The invariants; every count must be 0. */
export const INVARIANTS = [
  'in-use-claim-deleted',
  'paused-claim-deleted',
  'deleted-claim-a-new-statefulset-of-its-name-would-reattach',
  'claim-in-autoscaler-range-deleted',
  'deleted-without-prune-permission-on-every-claimant',
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
  'deleted-without-ready-snapshot',
  'volume-reclaimed-while-bound',
  'reclaim-without-audit-event',
  'automatic-delete-of-entity-not-opted-in',
  'automatic-delete-of-kept-claim',
  'opted-in-orphan-never-pruned',
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
 *
 * One client round trip of the re-check, injected latency taken out: the
 * pod list goes out once the claim and volume reads before it are answered
 * (a batch reads every claim first), so from the last of those being
 * served to the pod list being served is one round trip: the answer's way
 * back, the client's work, the next request's way in.
 */
function roundTripOfRecheck(
  before: RecordedRequest[],
  claimRead: RecordedRequest,
  podList: RecordedRequest,
  ns: string,
): number | undefined {
  if (podList.seq < claimRead.seq) return undefined;
  const lastRead = before
    .filter(
      r =>
        r.seq >= claimRead.seq &&
        r.seq < podList.seq &&
        r.verb === 'get' &&
        ((r.resource === 'persistentvolumeclaims' && r.namespace === ns) ||
          r.resource === 'persistentvolumes'),
    )
    .pop()!;
  return podList.at - podList.injectedLatencyMs - lastRead.at;
}

/** What keeps a claim besides being in use; counted apart when it began too late for the last check to see. */
export type KeptRule =
  | 'paused'
  | 'autoscaler range'
  | 'claimants'
  | 'a new StatefulSet of its name';

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
  /**
   * Deletions of a claim that a paused StatefulSet, an autoscaler's range or
   * a claimant the user may not prune kept only from after the plugin's
   * last check read what would show it (the check-to-delete window), or
   * from while the delete travelled; by rule.
   */
  keptAfterLastCheck: Partial<Record<KeptRule, number>>;
  keptDuringFlight: Partial<Record<KeptRule, number>>;
  /** What each of those was: the claim, the reason, and how long before its delete was sent it began. */
  windowNotes: string[];
  /** Prunes refused because a claimant was one the user may not prune: with a 403 naming it, or by the job when it started. */
  refusedForClaimant: { atRequest: number; byJob: number };
  /** Deletions whose outcome the job's own process could not log: killed, or frozen while its job was ended as interrupted. */
  lostWithKilledReplica: number;
  jobsByStatus: Record<string, number>;
  jobDurationsMs: number[];
  /** The undo window, for jobs (not dry runs) that asked for snapshots, by the simulator's record. */
  snapshots: SnapshotFigures;
  /**
   * Deletions judged for a StatefulSet of the claim's name that was not the
   * one its job was sent for: the StatefulSet was deleted, or deleted and
   * re-created (a new uid), after the prune was sent.
   */
  newStatefulSetJudged: number;
  /** Deletions by prunes of the claims a deleted StatefulSet left behind. */
  leftBehindDeletions: number;
  /** Volume reclaims (a replica set a volume's reclaim policy to Delete), each judged. */
  reclaims: ReclaimFigures;
  /** Automatic pruning: the deletions no prune of the campaign confirmed, and what the runs were exposed to. */
  autoPrune: AutoPruneFigures;
}

export interface SnapshotFigures {
  /** Jobs (not dry runs) that asked for snapshots. */
  jobs: number;
  /** Their deletions, each judged against the snapshots ready when it arrived. */
  deletionsJudged: number;
  /** …of which a volume with reclaim policy Retain (exempt: the data outlives the claim). */
  retainExempt: number;
  /** Claims they confirmed that survived (by uid), by what the simulator says of their snapshot. */
  keptBecause: Partial<Record<SnapshotKeptReason, number>>;
}

export type SnapshotKeptReason =
  | 'no VolumeSnapshotClass (required)'
  | 'snapshot failed'
  | 'snapshot not ready in time'
  | 'snapshot deleted by hand'
  | 'no snapshot taken'
  | 'other';

/**
 * The VolumeSnapshots that were ready at `at` and were taken of the claim
 * `name` with uid `uid`: by the simulator's record, ready (readyToUse,
 * bound to a content that names it back) and not since unready, failing,
 * being deleted or deleted; of that claim by the snapshot's source (its
 * `spec.source.persistentVolumeClaimName`) and by the uid the storage
 * system recorded when it cut it (the content's source-claim uid). A
 * label on the snapshot, which anyone may write, proves nothing.
 */
export function readySnapshotsAt(
  events: SnapshotRecord[],
  name: string,
  uid: string,
  at: number,
): string[] {
  const ready = new Map<string, string>();
  for (const e of [...events].sort((a, b) => a.at - b.at)) {
    if (e.at > at) break;
    if (e.event === 'ready') {
      if (e.sourceClaim === name && e.sourceClaimUid === uid)
        ready.set(e.uid, e.name);
    } else if (e.event !== 'created') ready.delete(e.uid);
  }
  return [...ready.values()];
}

const ok = (r: RecordedRequest) => r.status !== undefined && r.status < 300;
/** A live read of a StatefulSet by name that found none. */
const foundNoStatefulSet = (r: RecordedRequest) =>
  r.verb === 'get' && r.resource === 'statefulsets' && r.status === 404;

/**
 * The job holding a Lease: its `spec.holderIdentity` (`<prefix>/<job id>`)
 * names it. The job-id annotation is believed only when the
 * holder-identity annotation says it was written for that holder.
 */
function holderJob(lease?: KubeObject): string | undefined {
  const holder = lease?.spec?.holderIdentity;
  if (typeof holder !== 'string' || !holder) return undefined;
  const annotations = lease?.metadata.annotations ?? {};
  const job = annotations['pvc-pruner.backstage.io/job-id'];
  if (job && annotations['pvc-pruner.backstage.io/holder-identity'] === holder)
    return job;
  return holder.slice(holder.lastIndexOf('/') + 1);
}

/** When the Lease runs out, by its own timestamps. */
function leaseExpiry(lease: KubeObject): number {
  const renewed = lease.spec?.renewTime ?? lease.spec?.acquireTime;
  return renewed
    ? Date.parse(renewed) + (lease.spec?.leaseDurationSeconds ?? 0) * 1000
    : 0;
}

/** Whether the StatefulSet, as it was when the delete arrived, names the claim by one of its templates and an ordinal. */
function namesByOrdinal(
  d: ScenarioRun['deletions'][number],
  statefulSet: string,
): boolean {
  const sts = d.statefulSets.find(s => s.name === statefulSet);
  return (
    sts !== undefined && ordinalNaming(d.request.name ?? '', sts) !== undefined
  );
}

/** Each Lease of the namespace as it stood just before request `seq`. */
function leasesBefore(writes: LeaseWrite[], seq: number) {
  const state = new Map<string, KubeObject | undefined>();
  for (const w of writes) {
    if (w.request.seq >= seq || !ok(w.request) || w.request.dryRun) continue;
    state.set(w.request.name ?? w.after?.metadata.name ?? '', w.after);
  }
  return [...state.values()].filter((l): l is KubeObject => Boolean(l));
}

/**
 * What the plugin's last check before a delete read, and when the API
 * server served each read. The last check starts with the plugin's last
 * read of the claim; a reason to keep the claim that existed when the read
 * that shows it was served was there to see (a pod at the pod list, an
 * ordinal, a pause or labels at the live read of the StatefulSet, an
 * autoscaler at the list of the namespace's autoscalers), and so is a
 * reason the last check did not read at all.
 */
interface LastCheck {
  podsListed?: number;
  autoscalersListed?: number;
  statefulSetRead(name: string): number | undefined;
}

function lastCheckOf(
  d: ScenarioRun['deletions'][number],
  before: RecordedRequest[],
  ns: string,
): LastCheck {
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
  return {
    podsListed: lastServed(r => r.verb === 'list' && r.resource === 'pods'),
    autoscalersListed: lastServed(
      r => r.verb === 'list' && r.resource === 'horizontalpodautoscalers',
    ),
    statefulSetRead: name =>
      lastServed(
        r =>
          r.resource === 'statefulsets' &&
          (r.verb === 'list' || (r.verb === 'get' && r.name === name)),
      ),
  };
}

/** A reason that began at `since` was there for a read served at `readAt` to see (or the check did not read it at all). */
const seeable = (since: number, readAt?: number) =>
  readAt === undefined || since <= readAt;

function ago(d: ScenarioRun['deletions'][number], at?: number) {
  return at === undefined
    ? 'not read in its last check'
    : `last read ${(d.request.at - at).toFixed(
        0,
      )} ms before the delete was served`;
}

/** Why a deleted claim was in use, for each reason the plugin's last check could have seen. */
function inUseAtLastCheck(
  d: ScenarioRun['deletions'][number],
  check: LastCheck,
): string[] {
  return [
    ...d.pods
      .filter(p => seeable(p.since, check.podsListed))
      .map(
        p =>
          `pod ${p.name}${p.terminating ? ' (terminating)' : ''} (pods ${ago(
            d,
            check.podsListed,
          )})`,
      ),
    ...d.runningOrdinalOf
      .filter(r => seeable(r.since, check.statefulSetRead(r.statefulSet)))
      .map(
        r =>
          `ordinal ${r.ordinal} of StatefulSet ${r.statefulSet} (running for ${(
            d.request.at - r.since
          ).toFixed(0)} ms; the StatefulSet ${ago(
            d,
            check.statefulSetRead(r.statefulSet),
          )})`,
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

/**
 * Judges a run. `policy` is what the user may prune, as the replicas'
 * permission policy decides it: the demo's unless told.
 */
export function judge(
  run: ScenarioRun,
  policy: PolicyModel = demoPolicy(run.ownershipRefs),
): Judgement {
  const violations: Violation[] = [];
  const flag = (invariant: Invariant, detail: string) =>
    violations.push({ invariant, detail });
  const windowsMs: number[] = [];
  const roundTripsMs: number[] = [];
  let inUseDuringFlight = 0;
  let inUseAfterLastCheck = 0;
  const keptAfterLastCheck: Judgement['keptAfterLastCheck'] = {};
  const windowNotes: string[] = [];
  const keptDuringFlight: Judgement['keptDuringFlight'] = {};
  const lost = { withKilledReplica: 0 };
  let deletions = 0;
  let newStatefulSetJudged = 0;
  let leftBehindDeletions = 0;
  const ns = run.scenario.namespace;
  const snapshots: SnapshotFigures = {
    jobs: run.jobs.filter(j => j.snapshot && !j.dryRun).length,
    deletionsJudged: 0,
    retainExempt: 0,
    keptBecause: keptForSnapshots(run),
  };

  for (const error of run.harnessErrors) flag('harness', error);
  const autoPrune = emptyAutoPruneFigures();
  if (run.autoPrune) exposures(run, run.autoPrune.minimumGraceMs, autoPrune);

  /** Deletions each job made, by the simulator's record. */
  const deletedBy = new Map<string, Set<string>>();

  /**
   * For a prune that asked for snapshots (by the campaign's own request,
   * not the plugin's answer) or an automatic one (the replicas require
   * them): never deleted unless a ready snapshot of this claim's uid
   * existed when the delete arrived; a volume the claim's deletion leaves
   * in place (reclaim policy Retain, bound to this claim) needs none. The
   * figures count the campaign's prunes only.
   */
  /**
   * An automatic prune goes through the same jobs as a person's: it deletes
   * only while the Lease of a StatefulSet naming the claim is held, live by
   * its own timestamps when the delete was sent, by a job the campaign did
   * not start (a person's job's Lease does not cover it).
   */
  const judgeAutomaticLease = (
    d: ClaimDeletion,
    leases: KubeObject[],
    sentAt: number,
    whenSent: string,
  ) => {
    const name = d.request.name!;
    // Of a StatefulSet that names it now, or, gone, one whose name may.
    const naming = d.statefulSets.filter(
      s => ordinalNaming(name, s) !== undefined,
    );
    const names = naming.map(s => `pvc-pruner-${s.name}`.slice(0, 253));
    const fits = (lease: string) =>
      naming.length > 0
        ? names.includes(lease)
        : lease.startsWith('pvc-pruner-') &&
          mayName(lease.slice('pvc-pruner-'.length), name);
    const held = leases.find(l => {
      const holder = holderJob(l);
      return (
        fits(l.metadata.name) &&
        holder !== undefined &&
        !run.jobs.some(j => j.id === holder)
      );
    });
    if (!held)
      flag(
        'delete-without-holding-the-lease',
        `${name}: an automatic prune deleted it while no job but the campaign's held the Lease of a StatefulSet naming it (${
          names.join(', ') || 'none names it'
        })`,
      );
    else if (leaseExpiry(held) < sentAt)
      flag(
        'delete-without-holding-the-lease',
        `${name}: an automatic prune (job ${holderJob(held)}) deleted it ${(
          sentAt - leaseExpiry(held)
        ).toFixed(0)} ms after its Lease had expired${whenSent}`,
      );
  };

  const judgeSnapshot = (d: ClaimDeletion, by: string, asked: boolean) => {
    if (!asked || !d.claim) return;
    const automatic = by === 'an automatic prune';
    const name = d.request.name!;
    const replica = run.replicaOfUser.get(d.request.user ?? '');
    if (!automatic) snapshots.deletionsJudged++;
    const retained =
      d.volume?.reclaimPolicy === 'Retain' && d.volume.claimUid === d.claim.uid;
    if (retained) {
      if (!automatic) snapshots.retainExempt++;
      return;
    }
    const ready = readySnapshotsAt(
      run.snapshotEvents,
      name,
      d.claim.uid,
      d.request.at,
    );
    if (ready.length > 0) return;
    const seen = run.snapshotEvents.filter(
      e => e.sourceClaim === name && e.at <= d.request.at,
    );
    flag(
      'deleted-without-ready-snapshot',
      `${name} (uid ${d.claim.uid}, volume ${d.volume?.name ?? 'none'} ${
        d.volume?.reclaimPolicy ?? ''
      }) was deleted by ${by} (replica ${replica}), which ${
        automatic ? 'requires' : 'asked for'
      } snapshots, with no ready snapshot of that uid when the delete arrived; its snapshots' record then: ${
        seen
          .map(
            e =>
              `${e.name} ${e.event}${
                e.sourceClaimUid && e.sourceClaimUid !== d.claim!.uid
                  ? ` (of uid ${e.sourceClaimUid})`
                  : ''
              } ${(d.request.at - e.at).toFixed(0)} ms before`,
          )
          .join(', ') || 'none'
      }`,
    );
  };

  const deletedNames = new Set<string>();
  for (const d of run.deletions) {
    const replica = run.replicaOfUser.get(d.request.user ?? '');
    if (replica === undefined || !ok(d.request) || d.request.dryRun || !d.claim)
      continue;
    deletedNames.add(d.request.name!);
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
    // A live read of a StatefulSet that found none (404) is a read: what
    // appeared after it began too late for that check.
    const checked = run.requests.filter(
      r =>
        r.user === d.request.user &&
        r.seq < d.request.seq &&
        (ok(r) || foundNoStatefulSet(r)),
    );
    const check = lastCheckOf(d, checked, ns);
    /** A reason to keep the claim that began too late for the last check to see: counted, and said. */
    const note = (what: string, since: number) =>
      windowNotes.push(
        `${name} (uid ${d.claim!.uid}, replica ${replica}): ${what} from ${(
          sentAt - since
        ).toFixed(0)} ms before its delete was sent${
          since < sentAt ? '' : ' (while it was on the wire)'
        }${whenSent}`,
      );
    if (d.inUse) {
      const seen = inUseAtLastCheck(d, check);
      if (seen.length > 0)
        flag(
          'in-use-claim-deleted',
          `${name} (uid ${
            d.claim.uid
          }) was deleted by replica ${replica} while in use since ${(
            sentAt - (d.inUseSince ?? 0)
          ).toFixed(0)} ms before the delete was sent: ${seen.join(', ')}`,
        );
      else {
        if ((d.inUseSince ?? 0) < sentAt) inUseAfterLastCheck++;
        else inUseDuringFlight++;
        note(
          `in use (${[
            ...d.pods.map(p => `pod ${p.name}`),
            ...d.runningOrdinalOf.map(
              r => `ordinal ${r.ordinal} of ${r.statefulSet}`,
            ),
          ].join(', ')})`,
          d.inUseSince ?? 0,
        );
      }
    }
    // What keeps a claim besides use is judged the same way.
    const tooLate = (rule: KeptRule, since: number, what: string) => {
      const counts = since < sentAt ? keptAfterLastCheck : keptDuringFlight;
      counts[rule] = (counts[rule] ?? 0) + 1;
      note(what, since);
    };

    // 1b. Never a claim of a paused StatefulSet (replicas 0), under the default pausedStatefulSets: keep.
    if (run.pausedStatefulSets === 'keep')
      for (const sts of d.statefulSets) {
        if (
          sts.deleting ||
          sts.pausedSince === undefined ||
          !namesByOrdinal(d, sts.name)
        )
          continue;
        const read = check.statefulSetRead(sts.name);
        if (seeable(sts.pausedSince, read))
          flag(
            'paused-claim-deleted',
            `${name} (uid ${
              d.claim.uid
            }) was deleted by replica ${replica} while StatefulSet ${
              sts.name
            } was paused (0 replicas for ${(
              d.request.at - sts.pausedSince
            ).toFixed(0)} ms; the StatefulSet ${ago(d, read)})`,
          );
        else
          tooLate('paused', sts.pausedSince, `StatefulSet ${sts.name} paused`);
      }

    // 1c. Never a claim an autoscaler targeting its StatefulSet may scale back up to.
    for (const a of d.autoscaledOrdinalOf) {
      if (seeable(a.since, check.autoscalersListed))
        flag(
          'claim-in-autoscaler-range-deleted',
          `${name} (uid ${
            d.claim.uid
          }) was deleted by replica ${replica} while HorizontalPodAutoscaler ${
            a.autoscaler
          } (maxReplicas ${a.maxReplicas}) could scale StatefulSet ${
            a.statefulSet
          } up to ordinal ${a.ordinal}, as it could for ${(
            d.request.at - a.since
          ).toFixed(0)} ms (autoscalers ${ago(d, check.autoscalersListed)})`,
        );
      else
        tooLate(
          'autoscaler range',
          a.since,
          `inside the range of HorizontalPodAutoscaler ${a.autoscaler} (maxReplicas ${a.maxReplicas})`,
        );
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
    } else if (lastClaimRead.seq > lastPodList.seq) {
      // A batch reads every claim, then lists the pods once: the pod list vouches only for reads before it.
      flag(
        'delete-without-live-check',
        `${name}: its last read (served ${(
          d.request.at - lastClaimRead.at
        ).toFixed(
          0,
        )} ms before the delete) came after the last pod list: no pod list vouches for it`,
      );
    } else {
      // The pods are the in-use evidence (a claim's uid and version are held by the delete's preconditions).
      const lastCheck = lastPodList.at;
      const window = sentAt - lastCheck;
      windowsMs.push(window);
      const roundTrip = roundTripOfRecheck(
        before,
        lastClaimRead,
        lastPodList,
        ns,
      );
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
      // With automatic pruning on, what no prune of the campaign confirmed
      // is automatic: judged by whose it was and whether it was kept.
      if (run.autoPrune) {
        judgeAutomaticDeletion(run, d, {
          sentAt,
          lastClaimRead,
          before: checked,
          minimumGraceMs: run.autoPrune.minimumGraceMs,
          flag,
          figures: autoPrune,
        });
        judgeSnapshot(d, 'an automatic prune', true);
        judgeAutomaticLease(d, leases, sentAt, whenSent);
      } else
        flag(
          'unconfirmed-claim-deleted',
          `${name} (uid ${d.claim.uid}) was deleted by replica ${replica}, but no prune sent there confirmed that uid`,
        );
      continue;
    }
    // 3b. Allowed pvc-pruner.prune on every claimant of the StatefulSet (and
    // on the entity it went through), and pvc-pruner.unowned.prune when no
    // claimant selects it by the plain kubernetes-id: its claimants by the
    // labels it had when the delete arrived, in the catalog the job read when
    // it started (every replica served an entity before the prune was sent).
    // A prune whose answer was lost is judged by what it asked.
    const asked = job
      ? { ...job, what: `job ${job.id}` }
      : {
          ...pending[0],
          statefulSet: pending[0].plan.statefulSet,
          via: pending[0].plan.via,
          what: 'an unanswered prune',
        };
    const sts = d.statefulSets.find(
      x => x.name === asked.statefulSet && !x.deleting,
    );
    if (sts) {
      const refusals = pruneRefusals({
        catalog: run.catalog.filter(
          e =>
            e.visibleAt <= asked.sentAt &&
            (e.removedAt === undefined || e.removedAt > d.request.at),
        ),
        statefulSet: { namespace: ns, labels: sts.labels },
        cluster: CLUSTER,
        via: asked.via,
        policy,
      });
      if (refusals.length > 0) {
        const read = check.statefulSetRead(sts.name);
        // The entity it went through is refused whatever the labels say.
        const throughRefused = refusals.some(r =>
          r.startsWith(`${asked.via} `),
        );
        if (throughRefused || seeable(sts.labelsSince, read))
          flag(
            'deleted-without-prune-permission-on-every-claimant',
            `${name} (uid ${d.claim.uid}) was deleted by ${
              asked.what
            } (through ${
              asked.via
            }) though the user may not prune StatefulSet ${
              sts.name
            } (labels ${JSON.stringify(sts.labels)} for ${(
              d.request.at - sts.labelsSince
            ).toFixed(0)} ms; the StatefulSet ${ago(
              d,
              read,
            )}): it lacks ${refusals.join(', ')}`,
          );
        else
          tooLate(
            'claimants',
            sts.labelsSince,
            `claimed by what the user may not prune (${refusals.join(
              ', ',
            )}) since its labels changed`,
          );
      }
    }

    // 3c. With snapshots asked for (by the campaign's own request) and
    // required, never deleted unless a ready snapshot of this claim's uid
    // existed when the delete arrived.
    judgeSnapshot(
      d,
      job ? `job ${job.id}` : 'an unanswered prune',
      job ? job.snapshot : pending[0].plan.snapshot,
    );

    // 3d. Never a claim that a StatefulSet of its name which the job was not
    // sent for (one that appeared after the prune was sent: re-created under
    // the name, a new uid) would have reattached when the delete arrived,
    // once it had appeared where the last check's live read of that name
    // could see it. Dated by its appearance, not by when it began to
    // reattach the claim: a job that sees its StatefulSet re-created stops
    // (issue 19), whatever the new one's ordinals were at that read.
    const sentFor = job ?? pending[0];
    if (job ? job.leftBehind : pending[0].plan.leftBehind)
      leftBehindDeletions++;
    const target = job ? job.statefulSet : pending[0].plan.statefulSet;
    const targetNow = d.statefulSets.find(x => x.name === target);
    if (
      !targetNow ||
      targetNow.deleting ||
      (targetNow.existsSince ?? 0) > sentFor.sentAt
    )
      newStatefulSetJudged++;
    for (const r of reattachingStatefulSets(
      d,
      run.pausedStatefulSets === 'keep',
    )) {
      if (r.existsSince <= sentFor.sentAt) continue; // the one it was sent for: judged above
      const read = check.statefulSetRead(r.statefulSet);
      if (seeable(r.existsSince, read))
        flag(
          'deleted-claim-a-new-statefulset-of-its-name-would-reattach',
          `${name} (uid ${d.claim.uid}) was deleted by ${
            job ? `job ${job.id}` : 'an unanswered prune'
          } (replica ${replica}) though StatefulSet ${r.statefulSet} (uid ${
            r.uid
          }) had appeared ${(d.request.at - r.existsSince).toFixed(
            0,
          )} ms before, after the prune was sent, and ${r.reason} (for ${(
            d.request.at - r.since
          ).toFixed(0)} ms; the StatefulSet ${ago(d, read)})`,
        );
      else
        tooLate(
          'a new StatefulSet of its name',
          r.existsSince,
          `StatefulSet ${r.statefulSet} re-created (uid ${r.uid}), which ${r.reason}`,
        );
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

  if (run.autoPrune)
    judgeAwaited(
      run,
      deletedNames,
      run.autoPrune.minimumGraceMs,
      flag,
      autoPrune,
    );

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
        a.eventId === 'prune' &&
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

  // 7. Volumes reclaimed only when Released from a claim that is gone, and audited.
  const reclaims = judgeReclaims(run, flag);

  // Refused for a claimant: the answer, or the job's reason, names one the user may not prune.
  const unpermitted = run.catalog
    .filter(e => !policy.mayPrune(e))
    .map(e => e.ref);
  const namesOne = (text?: string) =>
    Boolean(text && unpermitted.some(ref => text.includes(ref)));
  const refusedForClaimant = {
    atRequest: run.sent.filter(
      s =>
        s.outcome.kind === 'refused' &&
        s.outcome.status === 403 &&
        namesOne(s.outcome.message),
    ).length,
    byJob: run.jobs.filter(j => namesOne(j.final?.reason)).length,
  };

  return {
    violations: dedupe(violations),
    deletions,
    windowsMs,
    roundTripsMs,
    inUseDuringFlight,
    inUseAfterLastCheck,
    keptAfterLastCheck,
    keptDuringFlight,
    windowNotes,
    refusedForClaimant,
    lostWithKilledReplica: lost.withKilledReplica,
    jobsByStatus,
    jobDurationsMs,
    snapshots,
    newStatefulSetJudged,
    leftBehindDeletions,
    reclaims,
    autoPrune,
  };
}

/**
 * The claims that jobs asking for snapshots confirmed and that still exist
 * (by uid) at the end, by what the simulator recorded of their snapshots
 * during the scenario: one failed, one was deleted by hand, one was never
 * ready (or only after its job ended), or none was taken (no class, a
 * refusal, a claim kept for another reason).
 */
function keptForSnapshots(
  run: ScenarioRun,
): Partial<Record<SnapshotKeptReason, number>> {
  const kept: Partial<Record<SnapshotKeptReason, number>> = {};
  const alive = new Set(run.finalClaims.map(c => c.metadata.uid));
  const counted = new Set<string>();
  for (const job of run.jobs) {
    if (!job.snapshot || job.dryRun) continue;
    for (const c of job.confirmed) {
      if (!alive.has(c.uid) || counted.has(c.uid)) continue;
      counted.add(c.uid);
      const of = run.snapshotEvents.filter(e => e.sourceClaim === c.name);
      const ended = job.endedAt ?? Infinity;
      const before = (e: SnapshotRecord) => e.at <= ended;
      let reason: SnapshotKeptReason;
      const plan = run.scenario.claims.find(p => p.name === c.name);
      if (
        of.length === 0 &&
        plan?.reclaimPolicy === 'Delete' &&
        plan.snapshotClass === 'none'
      )
        reason = 'no VolumeSnapshotClass (required)';
      else if (of.length === 0) reason = 'no snapshot taken';
      else if (of.some(e => e.event === 'error')) reason = 'snapshot failed';
      else if (of.some(e => e.event === 'deleting' && before(e)))
        reason = 'snapshot deleted by hand';
      else if (!of.some(e => e.event === 'ready' && before(e)))
        reason = 'snapshot not ready in time';
      else reason = 'other';
      kept[reason] = (kept[reason] ?? 0) + 1;
    }
  }
  return kept;
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
