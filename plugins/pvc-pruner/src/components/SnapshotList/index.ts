export { SnapshotList } from './SnapshotList';
export type { SnapshotListProps } from './SnapshotList';
