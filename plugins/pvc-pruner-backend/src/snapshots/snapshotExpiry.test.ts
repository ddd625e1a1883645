import { snapshotExpiry } from './snapshotExpiry';
import type { VolumeSnapshot } from '../kubernetes/volumeSnapshotTypes';

const snapshot = (
  creationTimestamp: string | undefined,
  keepUntil?: string,
): VolumeSnapshot => ({
  metadata: {
    name: 'data-db-3-abcd1234',
    ...(creationTimestamp
      ? { creationTimestamp: creationTimestamp as unknown as Date }
      : {}),
    ...(keepUntil !== undefined
      ? { annotations: { 'pvc-pruner.backstage.io/keep-until': keepUntil } }
      : {}),
  },
});

describe('snapshotExpiry', () => {
  it('is the creation plus the retention without a keep-until', () => {
    expect(snapshotExpiry(snapshot('2026-12-01T10:00:00Z'), 7)).toEqual({
      expiresAt: new Date('2026-12-08T10:00:00Z'),
    });
  });

  it('is the keep-until when that is later', () => {
    expect(
      snapshotExpiry(
        snapshot('2026-12-01T10:00:00Z', '2027-01-15T00:00:00.000Z'),
        7,
      ),
    ).toEqual({
      expiresAt: new Date('2027-01-15T00:00:00Z'),
      keepUntil: new Date('2027-01-15T00:00:00Z'),
    });
  });

  it('keeps the retention when the keep-until is earlier: a keep-until never shortens it', () => {
    expect(
      snapshotExpiry(snapshot('2026-12-01T10:00:00Z', '2026-12-02'), 7),
    ).toEqual({
      expiresAt: new Date('2026-12-08T10:00:00Z'),
      keepUntil: new Date('2026-12-02T00:00:00Z'),
    });
  });

  it.each(['next tuesday', '2027-13-45', '15/01/2027', ''])(
    'has no expiry for the unreadable keep-until %j, which it reports as written',
    keepUntil => {
      expect(
        snapshotExpiry(snapshot('2026-12-01T10:00:00Z', keepUntil), 7),
      ).toEqual({ keepUntilUnreadable: keepUntil });
    },
  );

  it('has no expiry without a creationTimestamp', () => {
    expect(snapshotExpiry(snapshot(undefined), 7)).toEqual({});
    expect(snapshotExpiry(snapshot(undefined, '2027-01-15'), 7)).toEqual({
      keepUntil: new Date('2027-01-15T00:00:00Z'),
    });
  });
});
