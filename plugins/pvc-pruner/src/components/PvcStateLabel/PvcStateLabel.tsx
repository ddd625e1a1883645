import { CircularProgress } from '@material-ui/core';
import CheckCircleIcon from '@material-ui/icons/CheckCircle';
import ErrorIcon from '@material-ui/icons/Error';
import HourglassEmptyIcon from '@material-ui/icons/HourglassEmpty';
import RemoveCircleOutlineIcon from '@material-ui/icons/RemoveCircleOutline';
import ScheduleIcon from '@material-ui/icons/Schedule';
import { PvcState } from '../../state/pruneProgressReducer';
import { IconLabel, IconLabelTone } from '../IconLabel';

const LOOK: Record<PvcState, { tone: IconLabelTone; icon: JSX.Element }> = {
  pending: {
    tone: 'neutral',
    icon: <ScheduleIcon fontSize="small" aria-hidden />,
  },
  deleting: {
    tone: 'progress',
    icon: <CircularProgress size={16} aria-hidden />,
  },
  deleted: {
    tone: 'success',
    icon: <CheckCircleIcon fontSize="small" aria-hidden />,
  },
  terminating: {
    tone: 'warning',
    icon: <HourglassEmptyIcon fontSize="small" aria-hidden />,
  },
  skipped: {
    tone: 'warning',
    icon: <RemoveCircleOutlineIcon fontSize="small" aria-hidden />,
  },
  failed: { tone: 'error', icon: <ErrorIcon fontSize="small" aria-hidden /> },
};

const LABELS: Record<PvcState, { text: string; dryRun: string }> = {
  pending: { text: 'Pending', dryRun: 'Pending' },
  deleting: { text: 'Deleting…', dryRun: 'Checking…' },
  deleted: { text: 'Deleted', dryRun: 'Would be deleted' },
  terminating: { text: 'Still terminating', dryRun: 'Still terminating' },
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
  return (
    <IconLabel
      {...LOOK[state]}
      text={dryRun ? LABELS[state].dryRun : LABELS[state].text}
      data-testid="pvc-state"
    />
  );
}
