import type {
  AutoPruneRun,
  FleetAutoPrune,
} from 'backstage-plugin-pvc-pruner-common';
import type { AutoPruneSchedule } from './types';

/** The fleet page's automatic pruning: whether it is on, the last run and the next (when on). */
export async function fleetAutoPrune(
  enabled: boolean,
  schedule: AutoPruneSchedule,
): Promise<FleetAutoPrune> {
  const [lastRun, nextRunAt] = await Promise.all([
    schedule.lastRun(),
    enabled ? schedule.nextRunAt() : undefined,
  ]);
  return {
    enabled,
    ...(lastRun ? { lastRun: withoutNames(lastRun) } : {}),
    ...(nextRunAt ? { nextRunAt } : {}),
  };
}

/**
 * The run as every fleet reader may see it: why it stopped names a claim,
 * a StatefulSet or an error of some team's, which the reader may not be
 * allowed to read; the log and the audit event keep it whole.
 */
function withoutNames(run: AutoPruneRun): AutoPruneRun {
  if (!run.stoppedBecause) return run;
  const stoppedBecause =
    /^stopped at (maxClaimsPerRun|maxBytesPerRun) \([^)]*\)/.exec(
      run.stoppedBecause,
    )?.[0] ??
    (run.status === 'failed'
      ? 'the run failed; its log says why'
      : run.stoppedBecause.startsWith('the run reached its timeout')
      ? 'the run reached its timeout'
      : run.status === 'refused'
      ? run.stoppedBecause
      : 'see the backend log');
  return { ...run, stoppedBecause };
}
