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
  SNAPSHOT_ANNOTATIONS,
  SNAPSHOT_LABELS,
  snapshotName,
} from './snapshotMetadata';
export { snapshotsOf } from './snapshotsOf';
export { snapshotExpiry } from './snapshotExpiry';
export {
  MANAGED_SNAPSHOTS,
  SNAPSHOT_EXPIRY_TASK_ID,
  SnapshotExpiryTask,
  type ClusterExpiry,
} from './SnapshotExpiryTask';
export { keptSnapshotOf, SnapshotKeeper } from './SnapshotKeeper';
export { KeptSnapshotTotals } from './KeptSnapshotTotals';
