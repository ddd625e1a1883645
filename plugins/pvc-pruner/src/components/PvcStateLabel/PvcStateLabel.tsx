import {
  Box,
  CircularProgress,
  Typography,
  makeStyles,
} from '@material-ui/core';
import CheckCircleIcon from '@material-ui/icons/CheckCircle';
import ErrorIcon from '@material-ui/icons/Error';
import RemoveCircleOutlineIcon from '@material-ui/icons/RemoveCircleOutline';
import ScheduleIcon from '@material-ui/icons/Schedule';
import { PvcState } from '../../hooks/pruneProgress';

const useStyles = makeStyles(theme => ({
  pending: { color: theme.palette.text.secondary },
  deleting: { color: theme.palette.info.main },
  deleted: { color: theme.palette.success.main },
  skipped: { color: theme.palette.warning.dark },
  failed: { color: theme.palette.error.main },
}));

const LABELS: Record<PvcState, { text: string; dryRun: string }> = {
  pending: { text: 'Pending', dryRun: 'Pending' },
  deleting: { text: 'Deleting…', dryRun: 'Checking…' },
  deleted: { text: 'Deleted', dryRun: 'Would be deleted' },
  skipped: { text: 'Skipped', dryRun: 'Would be skipped' },
  failed: { text: 'Failed', dryRun: 'Failed' },
};

/** Props of {@link PvcStateLabel}. */
export interface PvcStateLabelProps {
  state: PvcState;
  dryRun?: boolean;
}

/** A claim's state in a prune, as an icon and a word (never colour alone). */
export function PvcStateLabel(props: PvcStateLabelProps) {
  const { state, dryRun } = props;
  const classes = useStyles();
  const label = dryRun ? LABELS[state].dryRun : LABELS[state].text;
  const icon = {
    pending: <ScheduleIcon fontSize="small" aria-hidden />,
    deleting: <CircularProgress size={16} aria-hidden />,
    deleted: <CheckCircleIcon fontSize="small" aria-hidden />,
    skipped: <RemoveCircleOutlineIcon fontSize="small" aria-hidden />,
    failed: <ErrorIcon fontSize="small" aria-hidden />,
  }[state];
  return (
    <Box
      display="inline-flex"
      alignItems="center"
      gridGap={6}
      className={classes[state]}
    >
      {icon}
      <Typography variant="body2" component="span" data-testid="pvc-state">
        {label}
      </Typography>
    </Box>
  );
}
