import { ReactNode, useCallback, useMemo } from 'react';
import {
  Box,
  IconButton,
  LinearProgress,
  Tooltip,
  Typography,
} from '@material-ui/core';
import RefreshIcon from '@material-ui/icons/Refresh';
import {
  EmptyState,
  InfoCard,
  Progress,
  ResponseErrorPanel,
} from '@backstage/core-components';
import {
  OrphansResponse,
  formatBytes,
} from 'backstage-plugin-pvc-pruner-common';
import { ActiveJobsProvider } from '../../hooks/ActiveJobsContext';
import { ActiveJob, useActiveJobs } from '../../hooks/useActiveJobs';
import { useJobHistory } from '../../hooks/useJobHistory';
import { useOrphans } from '../../hooks/useOrphans';
import { useLeftBehind } from '../../hooks/useLeftBehind';
import { useSnapshots } from '../../hooks/useSnapshots';
import { isNotAllowed } from '../../utils/errors';
import { plural } from '../../utils/format';
import { AutoPruneSection } from '../AutoPruneSection';
import { ClusterSection } from '../ClusterSection';
import { LeftBehindSection } from '../LeftBehindSection';
import { JobHistory } from '../JobHistory';
import { MonthlyCost, PricingProvider } from '../MonthlyCost';
import { NotAllowedNotice } from '../NotAllowedNotice';
import { keepsClaimsForScaleUp } from '../ScaleUpNotice';
import { SnapshotsScope } from '../SnapshotsScope';

/** Props of {@link OrphanedVolumes}. */
export interface OrphanedVolumesProps {
  entityRef: string;
  /** The cluster the entity names in `backstage.io/kubernetes-cluster`, if any. */
  entityCluster?: string;
  title: string;
  /** Why this user may not prune; undefined when they may. */
  pruneDeniedReason?: string;
}

function Totals({ data }: { data: OrphansResponse }) {
  const { orphans, reclaimableBytes, retainedBytes } = data.totals;
  const unpriced = data.pricing?.unpricedStorageClasses ?? [];
  return (
    <Box mb={2}>
      <Typography variant="body1">
        <strong>{plural(orphans, 'orphaned claim')}</strong> ·{' '}
        <strong>{formatBytes(reclaimableBytes)}</strong> reclaimable by pruning
        <MonthlyCost prefix=" · " amount={data.totals.reclaimableMonthlyCost} />
      </Typography>
      {retainedBytes > 0 && (
        <Typography variant="body2">
          Plus {formatBytes(retainedBytes)} on Retain volumes
          <MonthlyCost prefix=", " amount={data.totals.retainedMonthlyCost} />:
          pruning frees the claims, but those disks stay, and are billed, until
          their PersistentVolumes are deleted.
        </Typography>
      )}
      {unpriced.length > 0 && (
        <Typography variant="body2">
          No price for StorageClass {unpriced.join(', ')} in pvcPruner.pricing:
          those claims are in no cost shown.
        </Typography>
      )}
    </Box>
  );
}

/** The card's body once the user may read: totals, clusters, prunes and history. */
export function OrphanedVolumes(props: OrphanedVolumesProps) {
  const { entityRef, entityCluster, title, pruneDeniedReason } = props;
  const orphans = useOrphans(entityRef, entityCluster);
  const snapshots = useSnapshots(
    entityRef,
    entityCluster,
    orphans.value?.snapshots?.enabled === true,
  );
  const leftBehind = useLeftBehind(entityRef, entityCluster);
  const history = useJobHistory(entityRef);
  const active = useActiveJobs(history.jobs);
  const { retry } = orphans;
  const { reload } = history;
  const { retry: reloadSnapshots } = snapshots;
  const { retry: reloadLeftBehind } = leftBehind;
  const { start, finish, dismiss } = active;

  const refresh = useCallback(() => {
    retry();
    reload();
    reloadSnapshots();
    reloadLeftBehind();
  }, [retry, reload, reloadSnapshots, reloadLeftBehind]);
  const onJobStarted = useCallback(
    (job: ActiveJob) => {
      start(job);
      reload();
    },
    [start, reload],
  );
  const onJobFinished = useCallback(
    (jobId: string) => {
      finish(jobId);
      refresh();
    },
    [finish, refresh],
  );
  const jobs = useMemo(
    () => ({
      jobs: active.jobs,
      started: onJobStarted,
      finished: onJobFinished,
      dismissed: dismiss,
    }),
    [active.jobs, onJobStarted, onJobFinished, dismiss],
  );

  const data = orphans.value;
  const following = Object.keys(active.jobs).length > 0;
  const nothingToPrune =
    data !== undefined && data.totals.orphans === 0 && !following;
  // Claims of deleted StatefulSets are something to prune too (their section says so).
  const leftBehindShown =
    leftBehind.value?.clusters.some(c => c.ok && c.groups.length > 0) ?? false;
  // A cluster that withholds StatefulSets says so even when nothing is left to prune.
  const withheld = data?.clusters.some(c => c.ok && c.withheld) ?? false;
  const keepsForScaleUp = (data?.clusters ?? []).some(
    cluster => cluster.ok && cluster.statefulSets.some(keepsClaimsForScaleUp),
  );

  let body: ReactNode;
  if (orphans.error && isNotAllowed(orphans.error)) {
    body = <NotAllowedNotice entityRef={entityRef} />;
  } else if (orphans.error && !data) {
    body = (
      <ResponseErrorPanel
        error={orphans.error}
        title="Could not list orphaned volumes"
      />
    );
  } else if (!data) {
    body = <Progress />;
  } else {
    body = (
      <ActiveJobsProvider value={jobs}>
        <PricingProvider pricing={data.pricing}>
          {orphans.error && (
            <ResponseErrorPanel
              error={orphans.error}
              title="Could not refresh; showing the last answer"
            />
          )}
          <Totals data={data} />
          <AutoPruneSection autoPrune={data.autoPrune} />
          {nothingToPrune && !keepsForScaleUp && !leftBehindShown && (
            <EmptyState
              missing="data"
              title="Nothing to prune"
              description={`No StatefulSet of ${entityRef}${
                withheld ? ' that you may see' : ''
              } left claims behind in the clusters that answered.`}
            />
          )}
          {nothingToPrune && keepsForScaleUp && (
            <Typography variant="body2" paragraph>
              {leftBehindShown
                ? `The claims ${entityRef}'s StatefulSets left behind are kept, because a scale-up would reattach them; only the claims of deleted StatefulSets, below, are left to prune.`
                : `Nothing to prune: the claims ${entityRef}'s StatefulSets left behind are kept, because a scale-up would reattach them.`}
            </Typography>
          )}
          {data.clusters
            .filter(
              cluster =>
                !cluster.ok ||
                cluster.withheld ||
                !nothingToPrune ||
                cluster.statefulSets.some(keepsClaimsForScaleUp),
            )
            .map(cluster => (
              <ClusterSection
                key={cluster.cluster}
                entityRef={entityRef}
                cluster={cluster}
                pruneDeniedReason={pruneDeniedReason}
                snapshots={data.snapshots}
                autoPrune={data.autoPrune}
                onKeepsChanged={retry}
                // With nothing to prune, only the StatefulSets whose kept claims need saying why.
                show={nothingToPrune ? keepsClaimsForScaleUp : undefined}
              />
            ))}
          <LeftBehindSection
            entityRef={entityRef}
            leftBehind={leftBehind.value}
            error={leftBehind.value ? undefined : leftBehind.error}
            pruneDeniedReason={pruneDeniedReason}
          />
          <SnapshotsScope
            entityRef={entityRef}
            snapshots={snapshots}
            showList={data.snapshots?.enabled === true}
            deniedReason={pruneDeniedReason}
            onChanged={refresh}
          >
            <JobHistory history={history} />
          </SnapshotsScope>
        </PricingProvider>
      </ActiveJobsProvider>
    );
  }

  return (
    <InfoCard
      title={title}
      subheader="PersistentVolumeClaims left behind by scaled-down StatefulSets"
      action={
        <Tooltip title="Refresh">
          <span>
            <IconButton
              aria-label="Refresh"
              onClick={refresh}
              disabled={orphans.loading}
            >
              <RefreshIcon />
            </IconButton>
          </span>
        </Tooltip>
      }
    >
      {orphans.loading && data && <LinearProgress aria-label="Refreshing" />}
      {body}
    </InfoCard>
  );
}
