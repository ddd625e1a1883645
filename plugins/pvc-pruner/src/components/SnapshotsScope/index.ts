export { SnapshotsScope } from './SnapshotsScope';
export type { SnapshotsScopeProps } from './SnapshotsScope';
