import { CircularProgress } from '@material-ui/core';
import BlockIcon from '@material-ui/icons/Block';
import CheckCircleIcon from '@material-ui/icons/CheckCircle';
import ErrorIcon from '@material-ui/icons/Error';
import HourglassEmptyIcon from '@material-ui/icons/HourglassEmpty';
import ScheduleIcon from '@material-ui/icons/Schedule';
import WarningIcon from '@material-ui/icons/Warning';
import { PruneJobStatus } from 'backstage-plugin-pvc-pruner-common';
import { IconLabel, IconLabelProps } from '../IconLabel';

const small = (Icon: typeof BlockIcon) => <Icon fontSize="small" aria-hidden />;

const LOOK: Record<PruneJobStatus, IconLabelProps> = {
  queued: { text: 'Queued', tone: 'neutral', icon: small(ScheduleIcon) },
  running: {
    text: 'Running',
    tone: 'progress',
    icon: <CircularProgress size={16} aria-hidden />,
  },
  succeeded: {
    text: 'Succeeded',
    tone: 'success',
    icon: small(CheckCircleIcon),
  },
  incomplete: {
    text: 'Incomplete',
    tone: 'warning',
    icon: small(HourglassEmptyIcon),
  },
  failed: { text: 'Failed', tone: 'error', icon: small(ErrorIcon) },
  aborted: { text: 'Aborted', tone: 'error', icon: small(BlockIcon) },
  interrupted: {
    text: 'Interrupted',
    tone: 'warning',
    icon: small(WarningIcon),
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
