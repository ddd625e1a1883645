import { fleetAutoPrune } from './fleetAutoPrune';
import { LOST_RUN } from './AutoPruneRunStore';

const lastRun = {
  id: '5d0c1d8e-58f4-4c4a-9d8c-3bb2f0a8a001',
  startedAt: '2026-12-03T10:00:00.000Z',
  status: 'running' as const,
  considered: 0,
  eligible: 0,
  deleted: 0,
  kept: 0,
  bytesDeleted: 0,
};
const schedule = {
  lastRun: async () => lastRun,
  nextRunAt: async () => '2026-12-03T11:00:00.000Z',
};

describe('fleetAutoPrune', () => {
  it('answers the last run and the next while enabled', async () => {
    expect(await fleetAutoPrune(true, schedule)).toEqual({
      enabled: true,
      lastRun,
      nextRunAt: '2026-12-03T11:00:00.000Z',
    });
  });

  it('answers no next run while disabled, but still the last one', async () => {
    expect(await fleetAutoPrune(false, schedule)).toEqual({
      enabled: false,
      lastRun,
    });
  });

  it('answers no last run before the first', async () => {
    expect(
      await fleetAutoPrune(true, {
        ...schedule,
        lastRun: async () => undefined,
      }),
    ).toEqual({ enabled: true, nextRunAt: '2026-12-03T11:00:00.000Z' });
  });

  it("names no team's claim, StatefulSet or error in why a run stopped: every fleet reader sees it", async () => {
    const stopped = (status: 'stopped-at-limit' | 'failed', why: string) =>
      fleetAutoPrune(true, {
        ...schedule,
        lastRun: async () => ({ ...lastRun, status, stoppedBecause: why }),
      }).then(answer => answer.lastRun?.stoppedBecause);
    await expect(
      stopped(
        'stopped-at-limit',
        'stopped at maxClaimsPerRun (50): data-ledger-db-4 of prod/ledger/ledger-db and the claims after it wait for the next run',
      ),
    ).resolves.toBe('stopped at maxClaimsPerRun (50)');
    await expect(
      stopped('failed', 'the run failed: Error: cluster "prod" ledger-db …'),
    ).resolves.toBe('the run failed; its log says why');
    await expect(stopped('failed', LOST_RUN)).resolves.toBe(LOST_RUN);
  });
});
