/**
 * Wire types of the pvc-pruner HTTP API (base `/api/pvc-pruner`): the types
 * generated from the backend's OpenAPI spec, each documented by its schema.
 * Sizes are bytes; times are ISO 8601 strings.
 */
import type { PruneJobStatus, PruneSummary } from './schema/openapi';

export type {
  AutoPruneRun,
  AutoPruneRunStatus,
  AutoPruneState,
  AutoPruneStatus,
  ClaimKeep,
  FleetAutoPrune,
  KeepClaimRequest,
  StatefulSetAutoPrune,
  ClusterOrphans,
  ClusterSnapshots,
  ClusterSnapshotsOk,
  ClusterStaleness,
  FleetCluster,
  FleetEntity,
  FleetLeftBehind,
  FleetOwner,
  FleetResponse,
  FleetStatefulSet,
  FleetTotals,
  FleetUnowned,
  InUsePvcs,
  KeepSnapshotRequest,
  KeptSnapshot,
  KeptPvc,
  KeptReason,
  LeftBehindEvidence,
  LeftBehindGroup,
  LeftBehindResponse,
  LeftBy,
  ClusterLeftBehind,
  OrphanedPvc,
  OrphansResponse,
  OrphanTotals,
  PersistentVolumeSummary,
  PricingSummary,
  PruneEvent,
  PruneEventType,
  PruneJob,
  PruneJobPage,
  PruneJobStatus,
  PruneRequest,
  PruneSummary,
  PvcOutcome,
  ReclaimRequest,
  ReclaimVolumeRef,
  ReleasedVolume,
  ReleasedVolumesResponse,
  RestoreRequest,
  RestoreResponse,
  SharedWith,
  SnapshotPlan,
  SnapshotRef,
  SnapshotSettings,
  SnapshotsResponse,
  SnapshotTotals,
  StatefulSetOrphans,
  StatefulSetSnapshots,
  UnownedOrphansResponse,
  WithheldStatefulSets,
} from './schema/openapi';

/** Whether a job in each status has ended: a status the spec adds does not compile until it is placed here. */
const ENDED: Record<PruneJobStatus, boolean> = {
  queued: false,
  running: false,
  succeeded: true,
  incomplete: true,
  failed: true,
  aborted: true,
  interrupted: true,
};

/** The statuses a job ends in. @public */
export const TERMINAL_JOB_STATUSES: ReadonlyArray<PruneJobStatus> = (
  Object.keys(ENDED) as PruneJobStatus[]
).filter(status => ENDED[status]);

/** A summary of nothing done yet. @public */
export function emptyPruneSummary(): PruneSummary {
  return {
    deleted: [],
    terminating: [],
    skipped: [],
    failed: [],
    bytesReclaimed: 0,
  };
}
