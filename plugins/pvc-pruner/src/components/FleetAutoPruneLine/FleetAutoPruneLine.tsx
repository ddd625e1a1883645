import { Typography } from '@material-ui/core';
import {
  AutoPruneRun,
  FleetAutoPrune,
  formatBytes,
} from 'backstage-plugin-pvc-pruner-common';
import { formatTime, plural } from '../../utils/format';

/** Props of {@link FleetAutoPruneLine}. */
export interface FleetAutoPruneLineProps {
  /** The fleet answer's `autoPrune`; nothing is shown without it or when it is disabled. */
  autoPrune?: FleetAutoPrune;
}

/** "last run 12/3/2026, 10:00:00 AM: deleted 3 claims (30 GiB), kept 1, eligible 4; stopped at limit: …". */
function lastRunText(run: AutoPruneRun): string {
  const when = formatTime(run.startedAt);
  const why = run.stoppedBecause ? `: ${run.stoppedBecause}` : '';
  if (run.status === 'running') return `a run is under way, since ${when}`;
  if (run.status === 'refused')
    return `the last run, ${when}, did not run${why}`;
  const counts = `deleted ${plural(run.deleted, 'claim')} (${formatBytes(
    run.bytesDeleted,
  )}), kept ${run.kept}, eligible ${run.eligible}`;
  const failures = run.dryRunFailures
    ? `; ${plural(
        run.dryRunFailures,
        'StatefulSet',
      )} not pruned: dry run failed`
    : '';
  let end = '';
  if (run.status === 'stopped-at-limit') end = `; stopped at limit${why}`;
  if (run.status === 'failed') end = `; failed${why}`;
  return `last run ${when}: ${counts}${failures}${end}`;
}

/**
 * Automatic pruning across the fleet, in one line: the last run's outcome
 * and when the next is due; nothing when the platform has not enabled it.
 */
export function FleetAutoPruneLine(props: FleetAutoPruneLineProps) {
  const { autoPrune } = props;
  if (!autoPrune?.enabled) return null;
  const parts = [
    autoPrune.lastRun ? lastRunText(autoPrune.lastRun) : 'no run yet',
    ...(autoPrune.nextRunAt
      ? [`next run ${formatTime(autoPrune.nextRunAt)}`]
      : []),
  ];
  return (
    <Typography variant="body2">
      <strong>Automatic pruning</strong>: {parts.join('; ')}.
    </Typography>
  );
}
