import { daysSeenOrphaned, seenOrphanedSince } from './sightings';

describe('seenOrphanedSince', () => {
  const now = Date.parse('2026-11-30T12:00:00Z');

  it('says when it was first seen, and claims at least that long, never more', () => {
    const text = seenOrphanedSince('2026-11-03T08:00:00Z', now)!;
    expect(text).toMatch(/^seen orphaned since /);
    expect(text).toContain('(at least 27 days)');
    expect(text).toContain(
      new Date('2026-11-03T08:00:00Z').toLocaleDateString(undefined, {
        day: 'numeric',
        month: 'short',
      }),
    );
    expect(text).not.toMatch(/orphaned for/);
  });

  it('counts a first day and names the year of an older sighting', () => {
    expect(seenOrphanedSince('2026-11-30T09:00:00Z', now)).toMatch(
      /\(less than a day\)$/,
    );
    expect(seenOrphanedSince('2026-11-29T11:00:00Z', now)).toMatch(
      /\(at least 1 day\)$/,
    );
    expect(seenOrphanedSince('2025-10-01T00:00:00Z', now)).toMatch(/2025/);
  });

  it('says nothing without a sighting', () => {
    expect(seenOrphanedSince(undefined, now)).toBeUndefined();
    expect(daysSeenOrphaned(undefined, now)).toBeUndefined();
    expect(daysSeenOrphaned('2026-11-03T08:00:00Z', now)).toBe(27);
  });
});
