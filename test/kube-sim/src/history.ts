import {
  ANN_SOURCE_CLAIM_UID,
  CONTENTS,
  SNAPSHOTS,
} from './snapshots/constants';
import { ObjectStore } from './store';
import { KubeObject, StoreEvent } from './types';

/**
 * What the API server itself saw, for an oracle that must not take a client's
 * word: every resource request at the instant the store served it (after any
 * injected latency, which stands for network delay on the way in), every
 * claim deletion with the cluster's state at that instant (the pods that
 * mount it, the namespace's StatefulSets with their labels and since when
 * they are paused, the ordinals they run and the autoscalers whose range
 * covers it, each dated), every write to a Lease with the Lease before
 * and after, each VolumeSnapshot's life (created, ready, no longer
 * ready, failed, deleted), and every PersistentVolume deletion, by a client
 * or by the provisioner reclaiming it, with the volume as the delete met it.
 */

/** Milliseconds since the epoch, with sub-millisecond precision; one clock for the simulator and an in-process campaign. */
export const historyNow = () => performance.timeOrigin + performance.now();

export interface RecordedRequest {
  seq: number;
  /** When the store served it (historyNow()), after injected latency. */
  at: number;
  /** When the server began to receive it (historyNow()), before injected latency and its body. */
  receivedAt?: number;
  /** Latency injected before it was served: network delay on the way in. */
  injectedLatencyMs: number;
  user?: string;
  userAgent?: string;
  verb: string;
  /** e.g. 'persistentvolumeclaims', 'statefulsets/scale'. */
  resource: string;
  namespace?: string;
  name?: string;
  dryRun: boolean;
  /** The HTTP status it was answered with; unset while in flight (and for watches until they end). */
  status?: number;
}

export interface PodReference {
  name: string;
  uid: string;
  terminating: boolean;
  /** When the pod (whose volumes never change) appeared. */
  since: number;
}

export interface StatefulSetState {
  name: string;
  uid: string;
  start: number;
  replicas: number;
  templates: string[];
  deleting: boolean;
  /** When this StatefulSet (this uid) appeared (0: before the simulator started recording). */
  existsSince?: number;
  /** Its labels (what decides which catalog entities claim it). */
  labels: Record<string, string>;
  /** Since when its labels have been these. */
  labelsSince: number;
  /** At 0 replicas: since when, without a break. */
  pausedSince?: number;
}

/** A HorizontalPodAutoscaler that may scale a StatefulSet up to a claim's ordinal. */
export interface AutoscaledOrdinal {
  statefulSet: string;
  ordinal: number;
  autoscaler: string;
  maxReplicas: number;
  /** Since when, without a break, it has targeted the StatefulSet with a reach (`ordinals.start + maxReplicas`) beyond the ordinal. */
  since: number;
}

/** A DELETE of a claim, with the state it met. */
export interface ClaimDeletion {
  request: RecordedRequest;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** The claim as it was when the request arrived (absent: it did not exist). */
  claim?: {
    uid: string;
    resourceVersion: string;
    terminating: boolean;
    finalizers: string[];
    volumeName?: string;
    /** Its annotations (a keep annotation, as `kubectl annotate` writes it, among them). */
    annotations?: Record<string, string>;
  };
  /**
   * The claim's volume as it was when the request arrived (absent: unbound, or
   * no such volume): its reclaim policy decides whether the data outlives the claim.
   */
  volume?: {
    name: string;
    reclaimPolicy?: string;
    /** The uid its claimRef names. */
    claimUid?: string;
  };
  /** Pods in the namespace that reference the claim, terminating ones included. */
  pods: PodReference[];
  /** The StatefulSets of the namespace. */
  statefulSets: StatefulSetState[];
  /** StatefulSets (and ordinals) that run the claim's ordinal now: the simulator's own reading of the name. */
  runningOrdinalOf: Array<{
    statefulSet: string;
    ordinal: number;
    since: number;
  }>;
  /**
   * HorizontalPodAutoscalers of the namespace (autoscaling/v2) that target a
   * StatefulSet naming the claim by an ordinal, and whose range covers it.
   */
  autoscaledOrdinalOf: AutoscaledOrdinal[];
  /** In use: referenced by a pod, or of an ordinal a StatefulSet runs. */
  inUse: boolean;
  /** Since when it has been in use without a break (the earliest reason). */
  inUseSince?: number;
  /**
   * Snapshots of the claim's uid that were ready when the request arrived (ApiHistory
   * always sets it; optional so that records written by hand in tests stay valid).
   */
  readySnapshots?: ReadySnapshot[];
}

/** A change in a VolumeSnapshot's life, as the store committed it. */
export interface SnapshotRecord {
  at: number;
  /**
   * created; ready (readyToUse, bound to a content that names it back);
   * unready (no longer ready: its content went, or it was marked for deletion);
   * error (status.error set or changed); deleting (marked for deletion); deleted (gone).
   */
  event: 'created' | 'ready' | 'unready' | 'error' | 'deleting' | 'deleted';
  namespace: string;
  name: string;
  uid: string;
  /** spec.source.persistentVolumeClaimName. */
  sourceClaim?: string;
  /** The uid of the claim the storage system took it of (from its content), once bound. */
  sourceClaimUid?: string;
  content?: string;
  error?: string;
}

/** A snapshot that was ready at some instant. */
export interface ReadySnapshot {
  namespace: string;
  name: string;
  uid: string;
  /** When it last became ready. */
  readySince: number;
}

/** A change of a PersistentVolume's `persistentVolumeReclaimPolicy`. */
export interface ReclaimPolicyChange {
  /** When the store committed it (historyNow()). */
  at: number;
  /** The volume's name and uid. */
  volume: string;
  volumeUid: string;
  /** The client request that made it (absent: not a client's). */
  request?: RecordedRequest;
  from?: string;
  to?: string;
  /** The volume's phase, and the claim its claimRef named, as the change met them. */
  phase?: string;
  claimUid?: string;
  claimRef?: { namespace?: string; name?: string; uid?: string };
  /** A claim of that namespace, name and uid existed: the volume was still bound to it, not released from it. */
  claimExists: boolean;
}

/**
 * A PersistentVolume marked for deletion (or deleted at once, having no
 * finalizer), with the volume as the delete met it: the first time the store
 * set its deletionTimestamp.
 */
export interface VolumeDeletion {
  /** When the store marked it (historyNow()). */
  at: number;
  name: string;
  uid: string;
  /** The claim its claimRef named (the uid absent: not bound to one). */
  claimRef?: { namespace?: string; name?: string; uid?: string };
  phase?: string;
  reclaimPolicy?: string;
  /** `pv.kubernetes.io/provisioned-by` (absent: statically provisioned). */
  provisionedBy?: string;
  finalizers: string[];
  /**
   * `request`: a client's DELETE (in `request`); `controller`: no request,
   * the provisioner reclaiming a Released volume whose policy is Delete.
   */
  by: 'request' | 'controller';
  request?: RecordedRequest;
  /** The last change of its reclaim policy before the delete (absent: none since it was created, or since the history began). */
  policyChange?: ReclaimPolicyChange;
}

/** A create, update, patch or delete of a Lease. */
export interface LeaseWrite {
  request: RecordedRequest;
  before?: KubeObject;
  after?: KubeObject;
}

const CANONICAL_ORDINAL = /^(0|[1-9][0-9]*)$/;
const PVC = 'persistentvolumeclaims';
const LEASES = 'coordination.k8s.io/leases';
const PV = 'persistentvolumes';
const HPAS = 'autoscaling/horizontalpodautoscalers';
const WRITES = new Set(['create', 'update', 'patch', 'delete']);

/** The claims a pod references: by name, and those of its generic ephemeral volumes (`<pod>-<volume>`). */
function claimNamesOf(pod: KubeObject): string[] {
  return (pod.spec?.volumes ?? [])
    .map((v: any) =>
      v?.ephemeral
        ? `${pod.metadata.name}-${v.name}`
        : v?.persistentVolumeClaim?.claimName,
    )
    .filter((n: unknown): n is string => typeof n === 'string');
}

function ordinalsOf(sts: KubeObject) {
  const start = Number(sts.spec?.ordinals?.start ?? 0);
  const replicas = Number(sts.spec?.replicas ?? 1);
  return { start, replicas };
}

/** What an HPA scales and how far: the StatefulSet it targets (as the HPA controller resolves `apps/*` StatefulSets), and its maxReplicas. */
function reachOf(hpa: KubeObject) {
  const ref = hpa.spec?.scaleTargetRef;
  const targets =
    ref?.kind === 'StatefulSet' &&
    typeof ref?.apiVersion === 'string' &&
    ref.apiVersion.startsWith('apps/') &&
    typeof ref?.name === 'string';
  const max = hpa.spec?.maxReplicas;
  return {
    target: targets ? (ref.name as string) : undefined,
    maxReplicas: typeof max === 'number' ? max : undefined,
  };
}

/** The claim a volume's claimRef names, as a record keeps it (nothing when it names none). */
function claimRefOf(pv?: KubeObject): {
  claimRef?: { namespace?: string; name?: string; uid?: string };
} {
  const ref = pv?.spec?.claimRef;
  return ref
    ? { claimRef: { namespace: ref.namespace, name: ref.name, uid: ref.uid } }
    : {};
}

type Timeline<T> = Array<{ at: number } & T>;

/** The entry of a timeline (oldest first) in force at `at`. */
function stateAt<T>(timeline: Timeline<T>, at: number) {
  let found: ({ at: number } & T) | undefined;
  for (const entry of timeline) {
    if (entry.at > at) break;
    found = entry;
  }
  return found;
}

function sortedLabels(labels?: Record<string, string>) {
  return Object.fromEntries(
    Object.entries(labels ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)),
  );
}

/** Records what the API server saw; see the module comment. */
export class ApiHistory {
  private seq = 0;
  private log: RecordedRequest[] = [];
  private deletions: ClaimDeletion[] = [];
  private volumeLog: VolumeDeletion[] = [];
  private policyLog: ReclaimPolicyChange[] = [];
  /** Volume uid → the last change of its reclaim policy. */
  private readonly policyChanges = new Map<string, ReclaimPolicyChange>();
  /** The request being served: store changes made meanwhile are its (the store serves each synchronously). */
  private serving?: RecordedRequest;
  private leases: LeaseWrite[] = [];
  private snapshotLog: SnapshotRecord[] = [];
  /** Snapshot uid → what was last recorded of it. */
  private readonly snapshotState = new Map<
    string,
    { ready: boolean; error?: string; deleting: boolean }
  >();
  private readonly pending = new Map<number, LeaseWrite>();
  /** Pod uid → when it appeared. */
  private readonly podSince = new Map<string, number>();
  /** StatefulSet uid → (when, start, replicas) each time its ordinals changed, oldest first. */
  private readonly ordinalHistory = new Map<
    string,
    Timeline<{ start: number; replicas: number }>
  >();
  /** StatefulSet uid → its labels and since when. */
  private readonly labelHistory = new Map<
    string,
    { at: number; labels: string }
  >();
  /** HPA uid → (when, target, maxReplicas) each time what it scales or how far changed, oldest first. */
  private readonly reachHistory = new Map<
    string,
    Timeline<{ target?: string; maxReplicas?: number }>
  >();

  constructor(private readonly store: ObjectStore) {
    store.subscribe(event => this.observe(event));
  }

  private observe(event: StoreEvent) {
    const { metadata } = event.object;
    if (event.resource === SNAPSHOTS) {
      this.observeSnapshot(event.object, event.type === 'DELETED');
    } else if (event.resource === CONTENTS) {
      const ref = event.object.spec?.volumeSnapshotRef;
      const snapshot = ref?.name
        ? this.store.get(SNAPSHOTS, ref.namespace, ref.name)
        : undefined;
      if (snapshot) this.observeSnapshot(snapshot, false);
    } else if (event.resource === PV) {
      this.observeVolume(event);
    } else if (event.resource === 'pods') {
      if (event.type === 'ADDED') this.podSince.set(metadata.uid, historyNow());
      if (event.type === 'DELETED') this.podSince.delete(metadata.uid);
    } else if (event.resource === 'apps/statefulsets') {
      if (event.type === 'DELETED') {
        this.ordinalHistory.delete(metadata.uid);
        this.labelHistory.delete(metadata.uid);
        return;
      }
      const now = ordinalsOf(event.object);
      const changes = this.ordinalHistory.get(metadata.uid) ?? [];
      const last = changes[changes.length - 1];
      if (!last || last.start !== now.start || last.replicas !== now.replicas)
        changes.push({ at: historyNow(), ...now });
      this.ordinalHistory.set(metadata.uid, changes);
      const labels = JSON.stringify(sortedLabels(metadata.labels));
      if (this.labelHistory.get(metadata.uid)?.labels !== labels)
        this.labelHistory.set(metadata.uid, { at: historyNow(), labels });
    } else if (event.resource === HPAS) {
      if (event.type === 'DELETED') {
        this.reachHistory.delete(metadata.uid);
        return;
      }
      const now = reachOf(event.object);
      const changes = this.reachHistory.get(metadata.uid) ?? [];
      const last = changes[changes.length - 1];
      if (
        !last ||
        last.target !== now.target ||
        last.maxReplicas !== now.maxReplicas
      )
        changes.push({ at: historyNow(), ...now });
      this.reachHistory.set(metadata.uid, changes);
    }
  }

  private observeVolume({ type, object, previous }: StoreEvent) {
    const { uid } = object.metadata;
    const before = previous ?? object;
    const from = previous?.spec?.persistentVolumeReclaimPolicy;
    const to = object.spec?.persistentVolumeReclaimPolicy;
    if (type === 'MODIFIED' && from !== to) {
      const ref = previous?.spec?.claimRef;
      const claim = ref?.name
        ? this.store.get(PVC, ref.namespace, ref.name)
        : undefined;
      const change: ReclaimPolicyChange = {
        at: historyNow(),
        volume: object.metadata.name,
        volumeUid: uid,
        ...(this.serving ? { request: this.serving } : {}),
        from,
        to,
        phase: previous?.status?.phase,
        claimUid: ref?.uid,
        ...claimRefOf(previous),
        claimExists: Boolean(ref?.uid && claim?.metadata.uid === ref.uid),
      };
      this.policyChanges.set(uid, change);
      this.policyLog.push(change);
    }
    if (
      object.metadata.deletionTimestamp &&
      !previous?.metadata.deletionTimestamp
    ) {
      const policyChange = this.policyChanges.get(uid);
      this.volumeLog.push({
        at: historyNow(),
        name: object.metadata.name,
        uid,
        ...claimRefOf(before),
        phase: before.status?.phase,
        reclaimPolicy: before.spec?.persistentVolumeReclaimPolicy,
        provisionedBy:
          before.metadata.annotations?.['pv.kubernetes.io/provisioned-by'],
        finalizers: [...(before.metadata.finalizers ?? [])],
        by: this.serving ? 'request' : 'controller',
        ...(this.serving ? { request: this.serving } : {}),
        ...(policyChange ? { policyChange } : {}),
      });
    }
    if (type === 'DELETED') this.policyChanges.delete(uid);
  }

  /** Bound to a content that names it back and still exists: the claim's uid it holds, if ready. */
  private readyContent(snapshot: KubeObject): KubeObject | undefined {
    if (snapshot.status?.readyToUse !== true) return undefined;
    if (snapshot.metadata.deletionTimestamp) return undefined;
    const name = snapshot.status.boundVolumeSnapshotContentName;
    const content = name
      ? this.store.get(CONTENTS, undefined, name)
      : undefined;
    if (!content || content.metadata.deletionTimestamp) return undefined;
    return content.spec?.volumeSnapshotRef?.uid === snapshot.metadata.uid
      ? content
      : undefined;
  }

  private observeSnapshot(snapshot: KubeObject, gone: boolean) {
    const { uid, namespace = '', name } = snapshot.metadata;
    const at = historyNow();
    const base = {
      namespace,
      name,
      uid,
      sourceClaim: snapshot.spec?.source?.persistentVolumeClaimName,
    };
    const push = (
      event: SnapshotRecord['event'],
      extra: Partial<SnapshotRecord> = {},
    ) => this.snapshotLog.push({ at, event, ...base, ...extra });
    let state = this.snapshotState.get(uid);
    if (!state) {
      state = { ready: false, deleting: false };
      this.snapshotState.set(uid, state);
      push('created');
    }
    const content = gone ? undefined : this.readyContent(snapshot);
    if (state.ready && !content) push('unready');
    if (!state.ready && content)
      push('ready', {
        content: content.metadata.name,
        sourceClaimUid: content.metadata.annotations?.[ANN_SOURCE_CLAIM_UID],
      });
    state.ready = Boolean(content);
    const error: string | undefined = snapshot.status?.error?.message;
    if (error && error !== state.error) push('error', { error });
    state.error = error;
    if (!state.deleting && snapshot.metadata.deletionTimestamp) {
      state.deleting = true;
      push('deleting');
    }
    if (gone) {
      push('deleted');
      this.snapshotState.delete(uid);
    }
  }

  /**
   * Snapshots of the claim with this uid that were ready at `at` (historyNow()):
   * what an oracle asks of a claim deletion ("a ready snapshot of that claim existed
   * when the delete arrived"). Judged from the simulator's own records only.
   */
  readySnapshotsOf(claimUid: string, at: number): ReadySnapshot[] {
    const ready = new Map<string, ReadySnapshot>();
    for (const record of this.snapshotLog) {
      if (record.at > at) break;
      if (record.event === 'ready' && record.sourceClaimUid === claimUid)
        ready.set(record.uid, {
          namespace: record.namespace,
          name: record.name,
          uid: record.uid,
          readySince: record.at,
        });
      else if (
        record.event === 'unready' ||
        record.event === 'deleting' ||
        record.event === 'deleted'
      )
        ready.delete(record.uid);
    }
    return [...ready.values()];
  }

  snapshotEvents(): SnapshotRecord[] {
    return [...this.snapshotLog];
  }

  /** A StatefulSet older than the history has had its ordinals since before it began. */
  private ordinalTimeline(sts: StatefulSetState) {
    return (
      this.ordinalHistory.get(sts.uid) ?? [
        { at: 0, start: sts.start, replicas: sts.replicas },
      ]
    );
  }

  /** Since when the StatefulSet has been at 0 replicas without a break, if it is now. */
  private pausedSince(sts: StatefulSetState): number | undefined {
    const changes = this.ordinalTimeline(sts);
    let since: number | undefined;
    for (let i = changes.length - 1; i >= 0; i--) {
      if (changes[i].replicas !== 0) break;
      since = changes[i].at;
    }
    return since;
  }

  /**
   * Since when, without a break, the HPA has targeted the StatefulSet with a
   * reach beyond `ordinal` (its maxReplicas and the StatefulSet's first
   * ordinal both as they were then), if it does now.
   */
  private coveredSince(
    sts: StatefulSetState,
    hpa: KubeObject,
    ordinal: number,
  ): number | undefined {
    const ordinals = this.ordinalTimeline(sts);
    const reaches = this.reachHistory.get(hpa.metadata.uid) ?? [
      { at: 0, ...reachOf(hpa) },
    ];
    const times = [...new Set([...ordinals, ...reaches].map(c => c.at))].sort(
      (a, b) => b - a,
    );
    let since: number | undefined;
    for (const at of times) {
      const o = stateAt(ordinals, at);
      const r = stateAt(reaches, at);
      if (
        !o ||
        !r ||
        r.target !== sts.name ||
        r.maxReplicas === undefined ||
        ordinal >= o.start + r.maxReplicas
      )
        break;
      since = at;
    }
    return since;
  }

  /** Since when `ordinal` has been in the StatefulSet's range without a break, if it is now. */
  private runningSince(
    sts: StatefulSetState,
    ordinal: number,
  ): number | undefined {
    const changes = this.ordinalTimeline(sts);
    let since: number | undefined;
    for (let i = changes.length - 1; i >= 0; i--) {
      const { start, replicas, at } = changes[i];
      if (ordinal < start || ordinal >= start + replicas) break;
      since = at;
    }
    return since;
  }

  /** Called when a request is about to be served (after injected latency); returns its sequence number. */
  arrived(
    request: Omit<RecordedRequest, 'seq' | 'at' | 'status'>,
    preconditions?: ClaimDeletion['preconditions'],
  ): number {
    const recorded: RecordedRequest = {
      ...request,
      seq: ++this.seq,
      at: historyNow(),
    };
    this.log.push(recorded);
    // Served synchronously up to served(): the store's changes meanwhile are this request's.
    if (WRITES.has(request.verb) || request.verb === 'deletecollection')
      this.serving = recorded;
    if (request.resource === PVC && request.verb === 'delete' && request.name)
      this.deletions.push({
        ...this.claimDeletion(recorded),
        ...(preconditions ? { preconditions } : {}),
      });
    if (request.resource === 'leases' && WRITES.has(request.verb)) {
      const write: LeaseWrite = {
        request: recorded,
        before: this.lease(request.namespace, request.name),
      };
      this.leases.push(write);
      this.pending.set(recorded.seq, write);
    }
    return recorded.seq;
  }

  /** Called once the request was answered. `name` is the created object's name for a create. */
  served(seq: number, status: number, name?: string) {
    const recorded = this.log[this.log.length - 1 - (this.seq - seq)];
    if (recorded?.seq === seq) recorded.status = status;
    if (this.serving?.seq === seq) this.serving = undefined;
    const write = this.pending.get(seq);
    if (write) {
      this.pending.delete(seq);
      write.after = this.lease(
        write.request.namespace,
        write.request.name ?? name,
      );
    }
  }

  private lease(namespace?: string, name?: string) {
    if (!name) return undefined;
    const lease = this.store.get(LEASES, namespace, name);
    return lease ? structuredClone(lease) : undefined;
  }

  private claimDeletion(request: RecordedRequest): ClaimDeletion {
    const name = request.name!;
    const namespace = request.namespace;
    const claim = this.store.get(PVC, namespace, name);
    const volumeName: string | undefined = claim?.spec?.volumeName;
    const volume = volumeName
      ? this.store.get('persistentvolumes', undefined, volumeName)
      : undefined;
    const pods: PodReference[] = this.store
      .list('pods', { namespace })
      .items.filter(pod => claimNamesOf(pod).includes(name))
      .map(pod => ({
        name: pod.metadata.name,
        uid: pod.metadata.uid,
        terminating: Boolean(pod.metadata.deletionTimestamp),
        since: this.podSince.get(pod.metadata.uid) ?? 0,
      }));
    const statefulSets: StatefulSetState[] = this.store
      .list('apps/statefulsets', { namespace })
      .items.map(sts => {
        const state: StatefulSetState = {
          name: sts.metadata.name,
          uid: sts.metadata.uid,
          ...ordinalsOf(sts),
          templates: (sts.spec?.volumeClaimTemplates ?? []).map(
            (t: KubeObject) => t.metadata?.name,
          ),
          deleting: Boolean(sts.metadata.deletionTimestamp),
          existsSince: this.ordinalHistory.get(sts.metadata.uid)?.[0]?.at ?? 0,
          labels: { ...(sts.metadata.labels ?? {}) },
          labelsSince: this.labelHistory.get(sts.metadata.uid)?.at ?? 0,
        };
        const pausedSince = this.pausedSince(state);
        return pausedSince === undefined ? state : { ...state, pausedSince };
      });
    const autoscalers = this.store.list(HPAS, { namespace }).items;
    const runningOrdinalOf: ClaimDeletion['runningOrdinalOf'] = [];
    const autoscaledOrdinalOf: AutoscaledOrdinal[] = [];
    for (const sts of statefulSets) {
      if (sts.deleting) continue;
      for (const template of sts.templates) {
        const prefix = `${template}-${sts.name}-`;
        if (!name.startsWith(prefix)) continue;
        const rest = name.slice(prefix.length);
        if (!CANONICAL_ORDINAL.test(rest)) continue;
        const ordinal = Number(rest);
        const since = this.runningSince(sts, ordinal);
        if (since !== undefined)
          runningOrdinalOf.push({ statefulSet: sts.name, ordinal, since });
        for (const hpa of autoscalers) {
          const covered = this.coveredSince(sts, hpa, ordinal);
          if (covered !== undefined)
            autoscaledOrdinalOf.push({
              statefulSet: sts.name,
              ordinal,
              autoscaler: hpa.metadata.name,
              maxReplicas: reachOf(hpa).maxReplicas!,
              since: covered,
            });
        }
      }
    }
    const reasons = [
      ...pods.map(p => p.since),
      ...runningOrdinalOf.map(r => r.since),
    ];
    return {
      request,
      claim: claim && {
        uid: claim.metadata.uid,
        resourceVersion: claim.metadata.resourceVersion,
        terminating: Boolean(claim.metadata.deletionTimestamp),
        finalizers: [...(claim.metadata.finalizers ?? [])],
        volumeName: claim.spec?.volumeName,
        annotations: { ...(claim.metadata.annotations ?? {}) },
      },
      volume: volume && {
        name: volume.metadata.name,
        reclaimPolicy: volume.spec?.persistentVolumeReclaimPolicy,
        claimUid: volume.spec?.claimRef?.uid,
      },
      pods,
      statefulSets,
      runningOrdinalOf,
      autoscaledOrdinalOf,
      inUse: reasons.length > 0,
      inUseSince: reasons.length > 0 ? Math.min(...reasons) : undefined,
      readySnapshots: claim
        ? this.readySnapshotsOf(claim.metadata.uid, request.at)
        : [],
    };
  }

  requests(): RecordedRequest[] {
    return [...this.log];
  }

  claimDeletions(): ClaimDeletion[] {
    return [...this.deletions];
  }

  /**
   * Every PersistentVolume deletion, oldest first: by whom (a client's request,
   * or the provisioner reclaiming it), and its phase, reclaim policy, claimRef
   * and finalizers as the delete met it, with the last change of its policy.
   * An oracle's "no volume was reclaimed while Bound or bound to another claim".
   */
  volumeDeletions(): VolumeDeletion[] {
    return [...this.volumeLog];
  }

  /**
   * Every change of a PersistentVolume's reclaim policy, oldest first, by
   * whom (a client's request, or none), with the volume's phase and claimRef
   * as the change met them and whether that claim still existed. An oracle's
   * "no volume was reclaimed while Bound or bound to another claim", whether
   * or not the volume was deleted afterwards.
   */
  reclaimPolicyChanges(): ReclaimPolicyChange[] {
    return [...this.policyLog];
  }

  leaseWrites(): LeaseWrite[] {
    return [...this.leases];
  }

  /** Forgets everything recorded so far (the pod, ordinal, snapshot and reclaim-policy timelines stay: they describe live objects). */
  clear() {
    this.log = [];
    this.deletions = [];
    this.volumeLog = [];
    this.policyLog = [];
    this.leases = [];
    // Records of snapshots that are gone answer no later question.
    this.snapshotLog = this.snapshotLog.filter(r =>
      this.snapshotState.has(r.uid),
    );
    this.pending.clear();
  }
}
