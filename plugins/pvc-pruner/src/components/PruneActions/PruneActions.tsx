import { ReactElement } from 'react';
import {
  Box,
  Button,
  Tooltip,
  Typography,
  makeStyles,
} from '@material-ui/core';
import InfoIcon from '@material-ui/icons/Info';
import LockIcon from '@material-ui/icons/Lock';

const useStyles = makeStyles(theme => ({
  reason: {
    display: 'inline-flex',
    alignItems: 'center',
    gap: theme.spacing(0.5),
    color: theme.palette.text.secondary,
  },
}));

/** Props of {@link PruneActions}. */
export interface PruneActionsProps {
  /** Names the StatefulSet in the buttons' accessible names. */
  statefulSet: string;
  /** Why the buttons are disabled, shown next to them; undefined when they are enabled. */
  disabledReason?: string;
  /** The reason is a permission denial (shown with a lock). */
  denied?: boolean;
  onDryRun: () => void;
  onPrune: () => void;
}

/** The Dry run and Prune buttons of a StatefulSet, with the reason when they are disabled. */
export function PruneActions(props: PruneActionsProps) {
  const { statefulSet, disabledReason, denied, onDryRun, onPrune } = props;
  const classes = useStyles();
  const disabled = Boolean(disabledReason);
  const withTooltip = (button: ReactElement) =>
    disabled ? (
      <Tooltip title={disabledReason!}>
        <span>{button}</span>
      </Tooltip>
    ) : (
      button
    );
  return (
    <Box display="flex" alignItems="center" flexWrap="wrap" gridGap={8} mt={1}>
      {withTooltip(
        <Button
          variant="outlined"
          color="primary"
          disabled={disabled}
          onClick={onDryRun}
          aria-label={`Dry run prune of ${statefulSet}`}
        >
          Dry run
        </Button>,
      )}
      {withTooltip(
        <Button
          variant="contained"
          color="secondary"
          disabled={disabled}
          onClick={onPrune}
          aria-label={`Prune orphaned claims of ${statefulSet}`}
        >
          Prune…
        </Button>,
      )}
      {disabled && (
        <Typography variant="body2" className={classes.reason}>
          {denied ? (
            <LockIcon fontSize="small" aria-hidden />
          ) : (
            <InfoIcon fontSize="small" aria-hidden />
          )}
          {disabledReason}
        </Typography>
      )}
    </Box>
  );
}
