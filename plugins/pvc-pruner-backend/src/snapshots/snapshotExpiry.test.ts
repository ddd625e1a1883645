import { isSnapshotDue, snapshotExpiry } from './snapshotExpiry';

const CREATED = '2026-01-01T00:00:00Z';
const snapshot = (annotations?: Record<string, string>, created = CREATED) => ({
  metadata: {
    creationTimestamp: created as unknown as Date,
    ...(annotations ? { annotations } : {}),
  },
});
const keep = (value: string) =>
  snapshot({ 'pvc-pruner.backstage.io/keep-until': value });

describe('snapshotExpiry', () => {
  it('is the creation plus the retention without a keep-until', () => {
    expect(snapshotExpiry(snapshot(), 7)).toEqual({
      expiresAt: new Date('2026-01-08T00:00:00Z'),
    });
  });

  it('is the keep-until when it is later, and the retention when it is earlier', () => {
    expect(snapshotExpiry(keep('2026-03-01T12:00:00Z'), 7)).toEqual({
      expiresAt: new Date('2026-03-01T12:00:00Z'),
      keepUntil: new Date('2026-03-01T12:00:00Z'),
    });
    expect(snapshotExpiry(keep('2026-01-02'), 7)).toEqual({
      expiresAt: new Date('2026-01-08T00:00:00Z'),
      keepUntil: new Date('2026-01-02T00:00:00Z'),
    });
  });

  it.each(['next tuesday', '1767225600', '2026-13-45', '', '2026-03-01 12:00'])(
    'keeps an unreadable keep-until (%j) apart, and such a snapshot is never due',
    value => {
      const expiry = snapshotExpiry(keep(value), 7);
      expect(expiry).toEqual({
        expiresAt: new Date('2026-01-08T00:00:00Z'),
        keepUntilUnreadable: value,
      });
      expect(isSnapshotDue(expiry, new Date('2030-01-01'))).toBe(false);
    },
  );

  it('is due from its expiry on, and never without a creation time', () => {
    const expiry = snapshotExpiry(snapshot(), 1);
    expect(isSnapshotDue(expiry, new Date('2026-01-01T23:59:59Z'))).toBe(false);
    expect(isSnapshotDue(expiry, new Date('2026-01-02T00:00:00Z'))).toBe(true);
    const undated = snapshotExpiry({ metadata: {} }, 1);
    expect(undated).toEqual({});
    expect(isSnapshotDue(undated, new Date('2030-01-01'))).toBe(false);
  });
});
