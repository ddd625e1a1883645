import { Box, Typography } from '@material-ui/core';
import { Alert, AlertTitle } from '@material-ui/lab';
import {
  AutoPruneStatus,
  ClusterOrphans,
  SnapshotSettings,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { StatefulSetSection } from '../StatefulSetSection';
import { WithheldNotice } from '../WithheldNotice';

/** From this age on, an answer of a disconnected watch cache says how old it may be. */
export const STALENESS_SHOWN_AFTER_SECONDS = 5;

/** Props of {@link ClusterSection}. */
export interface ClusterSectionProps {
  entityRef: string;
  cluster: ClusterOrphans;
  pruneDeniedReason?: string;
  /** `pvcPruner.snapshots`, as the orphans answer says. */
  snapshots?: SnapshotSettings;
  /** The entity's automatic pruning, as the orphans answer says. */
  autoPrune?: AutoPruneStatus;
  /** A claim was kept or no longer is: reload the orphans. */
  onKeepsChanged?: () => void;
  /** Which of its StatefulSets to show; every one unless told. */
  show?: (sts: StatefulSetOrphans) => boolean;
}

/**
 * One cluster: its StatefulSets, or the error that kept it from answering
 * (which does not hide the other clusters).
 */
export function ClusterSection(props: ClusterSectionProps) {
  const { cluster, show = () => true, ...rest } = props;
  return (
    <Box component="section" mb={3} aria-label={`Cluster ${cluster.cluster}`}>
      <Typography variant="h5" component="h3" gutterBottom>
        Cluster {cluster.cluster}
      </Typography>
      {!cluster.ok && (
        <Alert severity="error" role="alert">
          <AlertTitle>
            Could not read cluster {cluster.cluster}
            {cluster.error.statusCode
              ? ` (HTTP ${cluster.error.statusCode})`
              : ''}
          </AlertTitle>
          {cluster.error.name}: {cluster.error.message}
        </Alert>
      )}
      {cluster.ok &&
        cluster.staleness &&
        cluster.staleness.secondsSinceSync > STALENESS_SHOWN_AFTER_SECONDS && (
          <Alert severity="warning" role="status">
            Cluster data may be {cluster.staleness.secondsSinceSync} s old: the
            watch on {cluster.staleness.disconnectedWatches.join(', ')}{' '}
            disconnected. The backend is reconnecting; a prune re-checks every
            claim live before deleting it.
          </Alert>
        )}
      {cluster.ok && cluster.withheld && (
        <WithheldNotice withheld={cluster.withheld} />
      )}
      {cluster.ok && cluster.statefulSets.length === 0 && !cluster.withheld && (
        <Typography variant="body2">
          This entity has no StatefulSets in this cluster.
        </Typography>
      )}
      {cluster.ok &&
        cluster.statefulSets
          .filter(show)
          .map(sts => (
            <StatefulSetSection
              key={sts.uid}
              cluster={cluster.cluster}
              statefulSet={sts}
              {...rest}
            />
          ))}
    </Box>
  );
}
