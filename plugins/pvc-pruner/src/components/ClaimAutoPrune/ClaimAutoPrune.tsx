import { ReactElement } from 'react';
import {
  Box,
  Button,
  Tooltip,
  Typography,
  makeStyles,
} from '@material-ui/core';
import { OrphanedPvc } from 'backstage-plugin-pvc-pruner-common';
import { describeClaimKeep } from '../../utils/autoPrune';
import { formatTime } from '../../utils/format';

const useStyles = makeStyles(theme => ({
  muted: { color: theme.palette.text.secondary },
  cell: { minWidth: 180, maxWidth: 320, overflowWrap: 'anywhere' },
}));

/** Props of {@link ClaimAutoPrune}. */
export interface ClaimAutoPruneProps {
  pvc: OrphanedPvc;
  /** Whether automatic pruning acts on the claim's StatefulSet: only then is keeping offered. */
  automated: boolean;
  /** Why the user may not keep or stop keeping; undefined when they may. */
  deniedReason?: string;
  /** A stop-keeping request for this claim is under way. */
  busy?: boolean;
  onKeep: (pvc: OrphanedPvc) => void;
  onUnkeep: (pvc: OrphanedPvc) => void;
}

/**
 * What automatic pruning does with one orphan: when it becomes eligible,
 * or who keeps it and why; with Keep this claim, or Stop keeping for a
 * keep made through the card.
 */
export function ClaimAutoPrune(props: ClaimAutoPruneProps) {
  const { pvc, automated, deniedReason, busy } = props;
  const classes = useStyles();
  const withReason = (button: ReactElement) =>
    deniedReason ? (
      <Tooltip title={deniedReason}>
        <span>{button}</span>
      </Tooltip>
    ) : (
      button
    );
  let status: string | undefined;
  if (pvc.keep) {
    const text = describeClaimKeep(pvc.keep);
    status = text.charAt(0).toUpperCase() + text.slice(1);
  } else if (pvc.eligibleAt) {
    status =
      Date.parse(pvc.eligibleAt) <= Date.now()
        ? `Eligible since ${formatTime(pvc.eligibleAt)}: the next run prunes it`
        : `Eligible on ${formatTime(pvc.eligibleAt)}`;
  }
  const cardKeep = pvc.keep?.source === 'card';
  return (
    <Box className={classes.cell}>
      {status && <Typography variant="body2">{status}</Typography>}
      {cardKeep &&
        withReason(
          <Button
            size="small"
            disabled={Boolean(deniedReason) || busy}
            onClick={() => props.onUnkeep(pvc)}
            aria-label={`Stop keeping ${pvc.name}`}
          >
            {busy ? 'Stopping…' : 'Stop keeping'}
          </Button>,
        )}
      {!pvc.keep &&
        automated &&
        withReason(
          <Button
            size="small"
            color="primary"
            disabled={Boolean(deniedReason)}
            onClick={() => props.onKeep(pvc)}
            aria-label={`Keep ${pvc.name} from automatic pruning`}
          >
            Keep this claim
          </Button>,
        )}
      {!status && !automated && (
        <Typography variant="caption" className={classes.muted}>
          Not pruned automatically
        </Typography>
      )}
    </Box>
  );
}
