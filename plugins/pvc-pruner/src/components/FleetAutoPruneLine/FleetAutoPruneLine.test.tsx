import { screen } from '@testing-library/react';
import { renderInTestApp } from '@backstage/test-utils';
import { AutoPruneRun } from 'backstage-plugin-pvc-pruner-common';
import { formatTime } from '../../utils/format';
import { FleetAutoPruneLine } from './FleetAutoPruneLine';

const GiB = 2 ** 30;
const startedAt = '2026-12-03T10:00:00.000Z';
const nextRunAt = '2026-12-03T11:00:00.000Z';
const run = (overrides: Partial<AutoPruneRun> = {}): AutoPruneRun => ({
  id: '4f6c1a52-0000-4000-8000-000000000001',
  startedAt,
  finishedAt: '2026-12-03T10:02:00.000Z',
  status: 'finished',
  considered: 9,
  eligible: 4,
  deleted: 3,
  kept: 2,
  bytesDeleted: 30 * GiB,
  ...overrides,
});

describe('FleetAutoPruneLine', () => {
  it('says what the last run did and when the next is due', async () => {
    await renderInTestApp(
      <FleetAutoPruneLine
        autoPrune={{ enabled: true, lastRun: run(), nextRunAt }}
      />,
    );
    expect(document.body).toHaveTextContent(
      `Automatic pruning: last run ${formatTime(
        startedAt,
      )}: deleted 3 claims (30 GiB), kept 2, eligible 4; next run ${formatTime(
        nextRunAt,
      )}.`,
    );
  });

  it('says where a run stopped at its limit, and what failed dry runs held back', async () => {
    await renderInTestApp(
      <FleetAutoPruneLine
        autoPrune={{
          enabled: true,
          lastRun: run({
            status: 'stopped-at-limit',
            stoppedBecause: 'maxClaimsPerRun (3) reached',
            dryRunFailures: 1,
          }),
        }}
      />,
    );
    expect(document.body).toHaveTextContent(
      'deleted 3 claims (30 GiB), kept 2, eligible 4; 1 StatefulSet not pruned: dry run failed; stopped at limit: maxClaimsPerRun (3) reached.',
    );
  });

  it('says a refused run did not run, and why', async () => {
    await renderInTestApp(
      <FleetAutoPruneLine
        autoPrune={{
          enabled: true,
          lastRun: run({
            status: 'refused',
            stoppedBecause:
              'notifications are required, and the notifications backend is not installed',
          }),
          nextRunAt,
        }}
      />,
    );
    expect(document.body).toHaveTextContent(
      `Automatic pruning: the last run, ${formatTime(
        startedAt,
      )}, did not run: notifications are required, and the notifications backend is not installed; next run`,
    );
  });

  it('says there was no run yet; and nothing at all when disabled', async () => {
    const { unmount } = await renderInTestApp(
      <FleetAutoPruneLine autoPrune={{ enabled: true, nextRunAt }} />,
    );
    expect(document.body).toHaveTextContent(
      `Automatic pruning: no run yet; next run ${formatTime(nextRunAt)}.`,
    );
    unmount();
    await renderInTestApp(
      <FleetAutoPruneLine autoPrune={{ enabled: false }} />,
    );
    expect(screen.queryByText(/Automatic pruning/)).not.toBeInTheDocument();
  });
});
