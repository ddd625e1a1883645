import {
  Box,
  CircularProgress,
  Typography,
  makeStyles,
} from '@material-ui/core';
import BlockIcon from '@material-ui/icons/Block';
import CheckCircleIcon from '@material-ui/icons/CheckCircle';
import ErrorIcon from '@material-ui/icons/Error';
import ScheduleIcon from '@material-ui/icons/Schedule';
import WarningIcon from '@material-ui/icons/Warning';
import { PruneJobStatus } from 'backstage-plugin-pvc-pruner-common';

const useStyles = makeStyles(theme => ({
  queued: { color: theme.palette.text.secondary },
  running: { color: theme.palette.info.main },
  succeeded: { color: theme.palette.success.main },
  failed: { color: theme.palette.error.main },
  aborted: { color: theme.palette.error.main },
  interrupted: { color: theme.palette.warning.dark },
}));

const TEXT: Record<PruneJobStatus, string> = {
  queued: 'Queued',
  running: 'Running',
  succeeded: 'Succeeded',
  failed: 'Failed',
  aborted: 'Aborted',
  interrupted: 'Interrupted',
};

/** Props of {@link JobStatusLabel}. */
export interface JobStatusLabelProps {
  status: PruneJobStatus;
}

/** A prune job's status, as an icon and a word (never colour alone). */
export function JobStatusLabel(props: JobStatusLabelProps) {
  const { status } = props;
  const classes = useStyles();
  const icon = {
    queued: <ScheduleIcon fontSize="small" aria-hidden />,
    running: <CircularProgress size={16} aria-hidden />,
    succeeded: <CheckCircleIcon fontSize="small" aria-hidden />,
    failed: <ErrorIcon fontSize="small" aria-hidden />,
    aborted: <BlockIcon fontSize="small" aria-hidden />,
    interrupted: <WarningIcon fontSize="small" aria-hidden />,
  }[status];
  return (
    <Box
      display="inline-flex"
      alignItems="center"
      gridGap={6}
      className={classes[status]}
    >
      {icon}
      <Typography variant="body2" component="span">
        {TEXT[status]}
      </Typography>
    </Box>
  );
}
