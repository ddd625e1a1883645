import { Alert, AlertTitle } from '@material-ui/lab';
import { Typography, makeStyles } from '@material-ui/core';
import { WithheldStatefulSets } from 'backstage-plugin-pvc-pruner-common';
import { plural } from '../../utils/format';
import { EntityLinks } from '../EntityLinks';

const useStyles = makeStyles(theme => ({
  alert: { marginBottom: theme.spacing(2) },
}));

/** Why some of the withheld StatefulSets are withheld from everyone. */
function overClaimedSentence(overClaimed: number, statefulSets: number) {
  let subject = `${overClaimed} of them ${overClaimed === 1 ? 'is' : 'are'}`;
  if (overClaimed === statefulSets)
    subject = statefulSets === 1 ? 'It is' : 'They are';
  return `${subject} claimed by more than 20 catalog entities, which pvc-pruner takes as an error in the catalog: shown to nobody, and pruned by nobody, until those entities' Kubernetes annotations are narrowed.`;
}

/** Props of {@link WithheldNotice}. */
export interface WithheldNoticeProps {
  withheld: WithheldStatefulSets;
}

/**
 * Says how many of the entity's StatefulSets in a cluster are not shown,
 * because other entities claim them too and the user may not read those
 * entities' claims; it names those entities and nothing else of the
 * StatefulSets.
 */
export function WithheldNotice(props: WithheldNoticeProps) {
  const classes = useStyles();
  const { statefulSets, refusedClaimants, overClaimed } = props.withheld;
  const one = statefulSets === 1;
  const claimants =
    refusedClaimants.length === 1 ? (
      <>
        <EntityLinks entityRefs={refusedClaimants} />, whose claims you may not
        view
      </>
    ) : (
      <>
        entities whose claims you may not view:{' '}
        <EntityLinks entityRefs={refusedClaimants} max={20} />
      </>
    );
  return (
    <Alert severity="info" role="status" className={classes.alert}>
      <AlertTitle>{plural(statefulSets, 'StatefulSet')} not shown</AlertTitle>
      {plural(statefulSets, 'StatefulSet')} that this entity's annotations match{' '}
      {one ? 'is' : 'are'} not shown: {one ? 'it is' : 'they are'} also claimed
      by {refusedClaimants.length > 0 ? claimants : 'other entities'}.
      {overClaimed ? (
        <> {overClaimedSentence(overClaimed, statefulSets)}</>
      ) : null}
      <Typography variant="body2" color="textSecondary" component="span">
        {' '}
        If this entity should not claim {one ? 'it' : 'them'}, narrow its
        Kubernetes annotations.
      </Typography>
    </Alert>
  );
}
