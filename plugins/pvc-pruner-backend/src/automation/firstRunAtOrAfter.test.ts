import { firstRunAtOrAfter } from './AutoPruneRunStore';

/* The "will be pruned on D" of a before-notice: the first run at or after the claim becomes eligible. */

const RUN = new Date('2026-12-03T10:00:00.000Z');
const timeout = { minutes: 30 };

describe('firstRunAtOrAfter', () => {
  it('counts whole frequencies from a run, for a duration schedule', () => {
    const schedule = { frequency: { hours: 6 }, timeout };
    expect(firstRunAtOrAfter(schedule, '2026-12-03T13:00:00.000Z', RUN)).toBe(
      '2026-12-03T16:00:00.000Z',
    );
    expect(firstRunAtOrAfter(schedule, '2026-12-03T16:00:00.000Z', RUN)).toBe(
      '2026-12-03T16:00:00.000Z',
    );
  });

  it('takes the next cron time at or after it (cron in the local zone, as the scheduler reads it)', () => {
    const schedule = { frequency: { cron: '0 3 * * *' }, timeout };
    const local = (h: number, m: number) =>
      new Date(2026, 11, 5, h, m).toISOString();
    expect(firstRunAtOrAfter(schedule, local(1, 30), RUN)).toBe(local(3, 0));
    expect(firstRunAtOrAfter(schedule, local(3, 0), RUN)).toBe(local(3, 0));
  });

  it('answers the eligible time itself for a manual schedule', () => {
    const schedule = { frequency: { trigger: 'manual' as const }, timeout };
    expect(firstRunAtOrAfter(schedule, '2026-12-05T01:30:00.000Z', RUN)).toBe(
      '2026-12-05T01:30:00.000Z',
    );
  });
});
