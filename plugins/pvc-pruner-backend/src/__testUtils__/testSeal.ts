import { SnapshotSeal } from '../snapshots/SnapshotSeal';

/** A seal with a fixed key, for tests whose snapshots stand for pvc-pruner's own. */
export const TEST_SEAL = new SnapshotSeal(Buffer.alloc(32, 7));
