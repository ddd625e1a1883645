import { Alert } from '@material-ui/lab';
import { makeStyles } from '@material-ui/core';
import { EntityLinks } from '../EntityLinks';

const useStyles = makeStyles(theme => ({
  alert: { marginBottom: theme.spacing(1) },
}));

/** Props of {@link SharedWithNotice}. */
export interface SharedWithNoticeProps {
  /** The StatefulSet's other claimants (`sharedWith`); nothing is shown without any. */
  sharedWith?: string[];
}

/**
 * Says that other catalog entities claim the StatefulSet too, linked to
 * them, and that a prune needs the permission on each of them.
 */
export function SharedWithNotice(props: SharedWithNoticeProps) {
  const classes = useStyles();
  const { sharedWith } = props;
  if (!sharedWith?.length) return null;
  return (
    <Alert severity="info" className={classes.alert}>
      Also claimed by <EntityLinks entityRefs={sharedWith} />: their Kubernetes
      annotations match this StatefulSet too. A prune or a dry run needs
      pvc-pruner.prune on each of them as well.
    </Alert>
  );
}
