import type { FleetAutoPrune } from 'backstage-plugin-pvc-pruner-common';
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
    ...(lastRun ? { lastRun } : {}),
    ...(nextRunAt ? { nextRunAt } : {}),
  };
}
