export { OrphanSnapshotPlanner } from './OrphanSnapshotPlanner';
export { SnapshotSteps } from './SnapshotSteps';
export {
  DEFAULT_CLASS_ANNOTATION,
  SnapshotClassResolver,
  type SnapshotClassChoice,
  type SnapshotSource,
} from './SnapshotClassResolver';
export { SnapshotTaker, type SnapshotResult } from './SnapshotTaker';
export {
  labelValue,
  MANAGED_BY,
  SNAPSHOT_ANNOTATIONS,
  SNAPSHOT_LABELS,
  snapshotName,
} from './snapshotMetadata';
export { snapshotsOf } from './snapshotsOf';
export {
  MANAGED_SNAPSHOTS,
  SNAPSHOT_EXPIRY_TASK_ID,
  SnapshotExpiryTask,
  type ClusterExpiry,
} from './SnapshotExpiryTask';
export { SnapshotKeeper } from './SnapshotKeeper';
export { KeptSnapshotTotals } from './KeptSnapshotTotals';
export {
  isSnapshotDue,
  snapshotExpiry,
  type SnapshotExpiry,
} from './snapshotExpiry';
export { boundContentProblem } from './snapshotContent';
export {
  MAX_RESTORED_LABELS,
  notReadyReason,
  RESTORED_ANNOTATIONS,
  restorePlan,
  type RestorePlan,
} from './restorePlan';
export {
  KeptSnapshots,
  MAX_SNAPSHOTS_PER_STATEFULSET,
  type KeptSnapshotsOptions,
} from './KeptSnapshots';
export {
  SnapshotRestorer,
  type RestoreCalls,
  type RestoreResult,
  type SnapshotRestorerDeps,
} from './SnapshotRestorer';
export { SnapshotSeal } from './SnapshotSeal';
