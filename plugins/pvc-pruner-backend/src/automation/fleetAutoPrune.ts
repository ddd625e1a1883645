import type {
  AutoPruneRun,
  FleetAutoPrune,
} from 'backstage-plugin-pvc-pruner-common';
import { LOST_RUN } from './AutoPruneRunStore';
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
  return { ...run, stoppedBecause: namelessReason(run) };
}

function namelessReason(run: AutoPruneRun): string {
  const why = run.stoppedBecause ?? '';
  const limit = /^stopped at (maxClaimsPerRun|maxBytesPerRun) \([^)]*\)/.exec(
    why,
  );
  if (limit) return limit[0];
  if (why === LOST_RUN) return why;
  if (run.status === 'failed') return 'the run failed; its log says why';
  if (why.startsWith('the run reached its timeout'))
    return 'the run reached its timeout';
  // Why a run was refused is the platform's config, not a team's.
  if (run.status === 'refused') return why;
  return 'see the backend log';
}
