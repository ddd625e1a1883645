import { Box, Typography, makeStyles } from '@material-ui/core';
import {
  StatefulSetOrphans,
  formatBytes,
} from 'backstage-plugin-pvc-pruner-common';
import { ordinalsText, plural } from '../../utils/format';
import { seenOrphanedSince } from '../../utils/sightings';
import { MonthlyCost } from '../MonthlyCost';

const useStyles = makeStyles(theme => ({
  muted: { color: theme.palette.text.secondary },
  code: { fontFamily: 'monospace' },
}));

/** Props of {@link StatefulSetHeader}. */
export interface StatefulSetHeaderProps {
  statefulSet: StatefulSetOrphans;
}

/**
 * What a StatefulSet is now: its name, the ordinals it runs, its claim
 * retention policy, and what its orphans add up to.
 */
export function StatefulSetHeader(props: StatefulSetHeaderProps) {
  const { statefulSet: sts } = props;
  const classes = useStyles();
  const { whenScaled, whenDeleted } = sts.retentionPolicy;
  return (
    <Box mb={1}>
      <Typography variant="h6" component="h4">
        {sts.namespace}/{sts.name}
      </Typography>
      <Typography variant="body2">
        StatefulSet · {ordinalsText(sts)} ({sts.replicas} replicas,{' '}
        {sts.readyReplicas} ready)
        {' · '}
        {plural(sts.orphans.length, 'orphaned claim')}
        {sts.orphans.length > 0 && (
          <>
            {' · '}
            {formatBytes(sts.reclaimableBytes)} reclaimable
            <MonthlyCost prefix=" (" amount={sts.reclaimableMonthlyCost} />
            {sts.reclaimableMonthlyCost !== undefined && ')'}
            {sts.retainedBytes > 0 &&
              `, ${formatBytes(sts.retainedBytes)} on Retain volumes`}
            {sts.firstSeenOrphanedAt &&
              ` · ${seenOrphanedSince(sts.firstSeenOrphanedAt)}`}
          </>
        )}
      </Typography>
      <Typography variant="body2" className={classes.muted}>
        PVC retention policy: whenScaled{' '}
        <span className={classes.code}>{whenScaled}</span>, whenDeleted{' '}
        <span className={classes.code}>{whenDeleted}</span>. A policy only acts
        on future scale-downs and deletions; it never removes claims already
        left behind.
      </Typography>
    </Box>
  );
}
