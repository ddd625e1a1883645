/**
 * Wire types of the pvc-pruner HTTP API (base `/api/pvc-pruner`).
 * Sizes are bytes; times are ISO 8601 strings.
 */

/** @public */
export interface PersistentVolumeSummary {
  name: string;
  /** `Delete`, `Retain` or `Recycle`. */
  reclaimPolicy?: string;
  /** `Bound`, `Released`, `Available`, … */
  phase?: string;
  /** True when the disk will survive the claim's deletion (and keep being billed). */
  retained: boolean;
}

/** @public */
export interface OrphanedPvc {
  name: string;
  uid: string;
  resourceVersion: string;
  ordinal: number;
  /** The volumeClaimTemplate the claim was made from. */
  template: string;
  phase?: string;
  /** spec.resources.requests.storage as written, e.g. `20Gi`. */
  requested?: string;
  requestedBytes: number;
  /** status.capacity.storage when bound, e.g. `20Gi`. */
  capacity?: string;
  capacityBytes?: number;
  storageClassName?: string;
  volume?: PersistentVolumeSummary;
  createdAt?: string;
  /** A deletion is already under way (deletionTimestamp set). */
  deletionInProgress: boolean;
  /**
   * Scaling the StatefulSet to this many replicas (or more) would make the
   * controller attach this old volume, with its data, to a new pod.
   */
  reattachesAtReplicas: number;
  /** What the claim's size costs per month, in the response's `pricing.currency`; absent without a price. */
  monthlyCost?: number;
  /**
   * When pvc-pruner first saw this claim (by uid) as an orphan. It has been
   * orphaned at least since then, and maybe for longer: pvc-pruner cannot
   * know about the time before it first looked.
   */
  firstSeenOrphanedAt?: string;
}

/**
 * Why a claim that matches a template's name is kept, other than being a
 * claim of an ordinal the StatefulSet runs (those are {@link InUsePvcs}). @public
 */
export type KeptReason =
  /** A pod, running or terminating, still references the claim. */
  | 'mounted-by-pod'
  /** The name starts like a template's claim but the rest is not a decimal ordinal. */
  | 'not-an-ordinal';

/** @public */
export interface KeptPvc {
  name: string;
  uid: string;
  template: string;
  ordinal?: number;
  reason: KeptReason;
  /** For `mounted-by-pod`: the pods that reference the claim. */
  pods?: Array<{ name: string; terminating: boolean }>;
}

/**
 * A template's claims at ordinals the StatefulSet runs now: kept, because
 * they are in use. Grouped rather than listed one by one, as a large
 * StatefulSet has thousands. Each is named `<template>-<statefulset>-<ordinal>`.
 *
 * @public
 */
export interface InUsePvcs {
  template: string;
  /** The ordinals that have a claim, ascending. */
  ordinals: number[];
}

/** @public */
export interface StatefulSetOrphans {
  name: string;
  namespace: string;
  uid: string;
  replicas: number;
  /** The ordinals the StatefulSet runs now: start ≤ ordinal < end. */
  ordinals: { start: number; end: number };
  readyReplicas: number;
  retentionPolicy: { whenScaled: string; whenDeleted: string };
  templates: string[];
  orphans: OrphanedPvc[];
  /** Claims of the ordinals it runs, per template. */
  inUse: InUsePvcs[];
  /** Claims that match a template's name but are kept for another reason. */
  kept: KeptPvc[];
  /** Capacity freed by pruning: orphans whose volume is deleted with its claim. */
  reclaimableBytes: number;
  /** Capacity of orphans on `Retain` volumes: still billed after pruning until the PV is removed. */
  retainedBytes: number;
  /** Monthly cost of the reclaimable orphans, when priced (see {@link PricingSummary}). */
  reclaimableMonthlyCost?: number;
  /** Monthly cost of the orphans on `Retain` volumes: it goes on after pruning, until their PVs are deleted. */
  retainedMonthlyCost?: number;
  /** The earliest `firstSeenOrphanedAt` of its orphans. */
  firstSeenOrphanedAt?: string;
}

/**
 * How the costs in a response were priced (`pvcPruner.pricing`); absent
 * when no pricing is configured, and then no response carries a cost.
 *
 * @public
 */
export interface PricingSummary {
  /** ISO 4217 code of every cost in the response, e.g. `EUR`. */
  currency: string;
  /** StorageClasses of orphans that have no price (and there is no default): their bytes are in no cost. */
  unpricedStorageClasses: string[];
}

/** Sums of a set of StatefulSets' orphans. @public */
export interface OrphanTotals {
  orphans: number;
  reclaimableBytes: number;
  retainedBytes: number;
  /** Present when pricing is configured. */
  reclaimableMonthlyCost?: number;
  /** Present when pricing is configured. */
  retainedMonthlyCost?: number;
}

/**
 * How old an answer may be: it came from the backend's watch cache while a
 * watch of it was disconnected (the cluster's data since then is unknown).
 *
 * @public
 */
export interface ClusterStaleness {
  /** Seconds since the cache last followed the cluster (its oldest broken watch). */
  secondsSinceSync: number;
  /** The resources whose watch is disconnected, e.g. `persistentvolumeclaims`. */
  disconnectedWatches: string[];
}

/** @public */
export type ClusterOrphans =
  | {
      cluster: string;
      ok: true;
      statefulSets: StatefulSetOrphans[];
      /** Present when the answer came from a watch cache that is disconnected. */
      staleness?: ClusterStaleness;
    }
  | {
      cluster: string;
      ok: false;
      error: { name: string; message: string; statusCode?: number };
    };

/** Response of `GET /v1/orphans?entityRef=`. @public */
export interface OrphansResponse {
  entityRef: string;
  clusters: ClusterOrphans[];
  totals: OrphanTotals;
  /** Present when `pvcPruner.pricing` is configured. */
  pricing?: PricingSummary;
}

/** Body of `POST /v1/prune-jobs`. @public */
export interface PruneRequest {
  entityRef: string;
  cluster: string;
  namespace: string;
  statefulSet: string;
  /** The claims the user confirmed; each is re-checked right before deletion. */
  pvcs: Array<{ name: string; uid: string }>;
  dryRun?: boolean;
}

/** @public */
export type PruneJobStatus =
  | 'queued'
  | 'running'
  | 'succeeded'
  | 'failed'
  | 'aborted'
  | 'interrupted';

/** @public */
export const TERMINAL_JOB_STATUSES: ReadonlyArray<PruneJobStatus> = [
  'succeeded',
  'failed',
  'aborted',
  'interrupted',
];

/** What became of one claim in a prune. @public */
export interface PvcOutcome {
  name: string;
  uid: string;
  ordinal?: number;
  bytes?: number;
  /** Why it was skipped or failed. */
  reason?: string;
  /** The bound volume's fate: deleted under `Delete`, released (still billed) under `Retain`. */
  volume?: {
    name: string;
    reclaimPolicy?: string;
    fate: 'deleted' | 'released' | 'unknown';
  };
}

/** @public */
export interface PruneSummary {
  deleted: PvcOutcome[];
  skipped: PvcOutcome[];
  failed: PvcOutcome[];
  bytesReclaimed: number;
}

/** @public */
export interface PruneJob {
  id: string;
  entityRef: string;
  cluster: string;
  namespace: string;
  statefulSet: string;
  dryRun: boolean;
  status: PruneJobStatus;
  requestedBy: string;
  pvcs: Array<{ name: string; uid: string }>;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  /** Why an aborted, failed or interrupted job stopped. */
  reason?: string;
  summary: PruneSummary;
}

/** @public */
export type PruneEventType =
  | 'job-queued'
  | 'job-started'
  | 'lease-acquired'
  | 'pvc-deleting'
  | 'pvc-deleted'
  | 'pvc-skipped'
  | 'pvc-failed'
  | 'volume-deleted'
  | 'volume-released'
  | 'job-finished';

/** One entry in a job's ordered event log (and one SSE frame). @public */
export interface PruneEvent {
  jobId: string;
  /** 1, 2, 3, … per job; `?after=<seq>` replays what follows. */
  seq: number;
  type: PruneEventType;
  at: string;
  pvc?: string;
  message: string;
  /** For job-finished: the final status. */
  status?: PruneJobStatus;
  outcome?: PvcOutcome;
}

/** @public */
export interface PruneJobPage {
  items: PruneJob[];
  /** Pass as `?cursor=` for the next (older) page. */
  nextCursor?: string;
}
