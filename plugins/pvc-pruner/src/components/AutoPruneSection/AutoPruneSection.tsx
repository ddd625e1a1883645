import { Box, Typography, makeStyles } from '@material-ui/core';
import { Alert, AlertTitle } from '@material-ui/lab';
import {
  AutoPruneStatus,
  formatDuration,
} from 'backstage-plugin-pvc-pruner-common';
import { DAY_MS, formatTime } from '../../utils/format';

const useStyles = makeStyles(theme => ({
  code: { fontFamily: 'monospace' },
  muted: { color: theme.palette.text.secondary },
}));

/** The grace the opt-in hint suggests, unless the platform's floor is longer. */
const SUGGESTED_GRACE = '7d';
const SUGGESTED_GRACE_MS = 7 * DAY_MS;

/** Props of {@link AutoPruneSection}. */
export interface AutoPruneSectionProps {
  /** The orphans answer's `autoPrune`; nothing is shown without it. */
  autoPrune?: AutoPruneStatus;
}

function OptedIn({ status }: { status: AutoPruneStatus }) {
  const classes = useStyles();
  // As the owners wrote it ("7d", not "1w").
  const grace =
    status.value ??
    (status.graceMs !== undefined ? formatDuration(status.graceMs) : '');
  return (
    <Typography variant="body2">
      <strong>Automatic pruning: on</strong>, after a grace period of {grace} (
      <span className={classes.code}>{status.annotation}</span>): an orphan is
      deleted {grace} after it was first seen orphaned
      {status.snapshots ? ', with a snapshot first' : ''}, unless it is kept.
      {status.notifyBeforeMs !== undefined &&
        ` Owners are told ${formatDuration(status.notifyBeforeMs)} before.`}
      {status.nextRunAt && ` Next run ${formatTime(status.nextRunAt)}.`}
    </Typography>
  );
}

function Invalid({ status }: { status: AutoPruneStatus }) {
  const classes = useStyles();
  return (
    <Alert severity="warning" role="alert">
      <AlertTitle>
        Automatic pruning is off for this entity until its annotation is fixed
      </AlertTitle>
      <span className={classes.code}>
        {status.annotation}: "{status.value ?? ''}"
      </span>
      {status.problem
        ? `: ${status.problem}`
        : ' does not read as a grace period.'}
    </Alert>
  );
}

function HowToOptIn({ status }: { status: AutoPruneStatus }) {
  const classes = useStyles();
  const floor = status.minimumGraceMs ?? 0;
  const grace =
    floor > SUGGESTED_GRACE_MS ? formatDuration(floor) : SUGGESTED_GRACE;
  return (
    <Typography variant="body2" className={classes.muted}>
      Prune automatically: add{' '}
      <span className={classes.code}>
        {status.annotation}: "{grace}"
      </span>{' '}
      to this entity's catalog-info.yaml annotations.
    </Typography>
  );
}

/**
 * The entity's automatic pruning, said once for the card: on, and with
 * what grace and when it next runs; the annotation's problem when it is
 * invalid; a one-line how-to when not opted in; nothing when the platform
 * has not enabled it.
 */
export function AutoPruneSection(props: AutoPruneSectionProps) {
  const status = props.autoPrune;
  if (!status || status.state === 'disabled') return null;
  return (
    <Box mb={2} component="section" aria-label="Automatic pruning">
      {status.state === 'opted-in' && <OptedIn status={status} />}
      {status.state === 'invalid' && <Invalid status={status} />}
      {status.state === 'not-opted-in' && <HowToOptIn status={status} />}
    </Box>
  );
}
