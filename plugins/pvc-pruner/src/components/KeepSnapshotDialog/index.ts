export { KeepSnapshotDialog } from './KeepSnapshotDialog';
export type { KeepSnapshotDialogProps } from './KeepSnapshotDialog';
