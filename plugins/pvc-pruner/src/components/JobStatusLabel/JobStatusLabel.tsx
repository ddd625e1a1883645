import { CircularProgress } from '@material-ui/core';
import BlockIcon from '@material-ui/icons/Block';
import CheckCircleIcon from '@material-ui/icons/CheckCircle';
import ErrorIcon from '@material-ui/icons/Error';
import HourglassEmptyIcon from '@material-ui/icons/HourglassEmpty';
import ScheduleIcon from '@material-ui/icons/Schedule';
import WarningIcon from '@material-ui/icons/Warning';
import { PruneJobStatus } from 'backstage-plugin-pvc-pruner-common';
import { IconLabel, IconLabelTone } from '../IconLabel';

const LOOK: Record<
  PruneJobStatus,
  { text: string; tone: IconLabelTone; icon: JSX.Element }
> = {
  queued: {
    text: 'Queued',
    tone: 'neutral',
    icon: <ScheduleIcon fontSize="small" aria-hidden />,
  },
  running: {
    text: 'Running',
    tone: 'progress',
    icon: <CircularProgress size={16} aria-hidden />,
  },
  succeeded: {
    text: 'Succeeded',
    tone: 'success',
    icon: <CheckCircleIcon fontSize="small" aria-hidden />,
  },
  incomplete: {
    text: 'Incomplete',
    tone: 'warning',
    icon: <HourglassEmptyIcon fontSize="small" aria-hidden />,
  },
  failed: {
    text: 'Failed',
    tone: 'error',
    icon: <ErrorIcon fontSize="small" aria-hidden />,
  },
  aborted: {
    text: 'Aborted',
    tone: 'error',
    icon: <BlockIcon fontSize="small" aria-hidden />,
  },
  interrupted: {
    text: 'Interrupted',
    tone: 'warning',
    icon: <WarningIcon fontSize="small" aria-hidden />,
  },
};

/** Props of {@link JobStatusLabel}. */
export interface JobStatusLabelProps {
  status: PruneJobStatus;
}

/** A prune job's status, as an icon and a word (never colour alone). */
export function JobStatusLabel(props: JobStatusLabelProps) {
  return <IconLabel {...LOOK[props.status]} />;
}
