import { ReactNode, useCallback, useMemo, useState } from 'react';
import { Box, Paper, Typography, makeStyles } from '@material-ui/core';
import { Alert, AlertTitle } from '@material-ui/lab';
import { useApi } from '@backstage/core-plugin-api';
import {
  AutoPruneStatus,
  LeftBy,
  OrphanedPvc,
  SnapshotSettings,
  StatefulSetOrphans,
  formatBytes,
} from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerApiRef } from '../../api/PvcPrunerApi';
import { useActiveJobsContext } from '../../hooks/ActiveJobsContext';
import { ActiveJob, statefulSetKey } from '../../hooks/useActiveJobs';
import { useClaimantsWithoutPrune } from '../../hooks/useClaimantsWithoutPrune';
import { claimBytes, plural, podName } from '../../utils/format';
import { ClaimKeeping } from '../ClaimKeeping';
import { KeptPvcList } from '../KeptPvcList';
import { MonthlyCost } from '../MonthlyCost';
import { OrphanTable } from '../OrphanTable';
import { PruneActions } from '../PruneActions';
import { PruneDialog } from '../PruneDialog';
import { PruneProgress } from '../PruneProgress';
import { SharedWithNotice } from '../SharedWithNotice';
import { ScaleUpNotice } from '../ScaleUpNotice';
import { StatefulSetHeader } from '../StatefulSetHeader';
import { TerminatingNotice } from '../TerminatingNotice';

const useStyles = makeStyles(theme => ({
  root: { padding: theme.spacing(2), marginBottom: theme.spacing(2) },
  alert: { marginBottom: theme.spacing(1) },
}));

/** Props of {@link StatefulSetSection}. */
export interface StatefulSetSectionProps {
  /**
   * The entity whose card shows the StatefulSet, sent with a prune; undefined
   * for a StatefulSet that no entity claims (the fleet page's Unowned section).
   */
  entityRef?: string;
  cluster: string;
  statefulSet: StatefulSetOrphans;
  /** Why pruning is not possible for this user; undefined when it is. */
  pruneDeniedReason?: string;
  /** `pvcPruner.snapshots`, as the orphans answer says; the prune dialog offers snapshots when enabled. */
  snapshots?: SnapshotSettings;
  /**
   * The StatefulSet was deleted and these are the claims it left: sent with
   * a prune; with `name-and-labels`, each claim's name must be typed.
   */
  leftBy?: Omit<LeftBy, 'typedNames'>;
  /** Shown instead of the StatefulSet's header (what it runs). */
  header?: ReactNode;
  /** The entity's automatic pruning: when opted in, each orphan says when it is eligible, and may be kept. */
  autoPrune?: AutoPruneStatus;
  /** A claim was kept or no longer is: reload the orphans. */
  onKeepsChanged?: () => void;
}

/** "a, b, c" or "a, b, c and 12 more". */
function listSome(names: string[], max = 5): string {
  const shown = names.slice(0, max).join(', ');
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

function RetainWarning({ sts }: { sts: StatefulSetOrphans }) {
  const classes = useStyles();
  const retained = sts.orphans.filter(o => o.volume?.retained);
  if (retained.length === 0) return null;
  return (
    <Alert severity="warning" className={classes.alert}>
      <AlertTitle>
        {plural(retained.length, 'claim')} on Retain volumes (
        {formatBytes(sts.retainedBytes)})
      </AlertTitle>
      Pruning deletes the claim, but the disk survives and is still billed
      <MonthlyCost prefix=", " amount={sts.retainedMonthlyCost} />, until
      someone deletes its PersistentVolume:{' '}
      {listSome(retained.map(o => o.volume!.name))}.
    </Alert>
  );
}

function ReattachWarning({ sts }: { sts: StatefulSetOrphans }) {
  const classes = useStyles();
  if (sts.orphans.length === 0) return null;
  const first = sts.orphans.reduce((a, b) =>
    b.reattachesAtReplicas < a.reattachesAtReplicas ? b : a,
  );
  return (
    <Alert severity="warning" className={classes.alert}>
      <AlertTitle>Scaling up brings old data back</AlertTitle>
      If {sts.name} is scaled to {first.reattachesAtReplicas} replicas or more,
      the StatefulSet controller attaches {first.name} — old data and all — to
      the new pod {podName(sts.name, first.ordinal)}
      {sts.orphans.length > 1 &&
        '; each claim below says at which replica count it comes back'}
      .
    </Alert>
  );
}

/**
 * One StatefulSet: what it runs, its orphans and their hazards, the claims
 * it keeps, the prune buttons, and the prune it runs, if any.
 */
export function StatefulSetSection(props: StatefulSetSectionProps) {
  const {
    entityRef,
    cluster,
    statefulSet: sts,
    pruneDeniedReason,
    snapshots,
    leftBy,
  } = props;
  const claimants = useClaimantsWithoutPrune(sts.sharedWith, sts.pruneNeeds);
  const { jobs, started, finished, dismissed } = useActiveJobsContext();
  // The prune the card follows for this StatefulSet, if any.
  const job =
    jobs[
      statefulSetKey({
        cluster,
        namespace: sts.namespace,
        statefulSet: sts.name,
      })
    ];
  const classes = useStyles();
  const api = useApi(pvcPrunerApiRef);
  const [dialog, setDialog] = useState<{ open: boolean; dryRun: boolean }>({
    open: false,
    dryRun: true,
  });
  const busy = job && !job.finished;
  const shownJob = useMemo(
    () => job && enrich(job, sts.orphans),
    [job, sts.orphans],
  );

  const confirm = useCallback(
    async (
      pvcs: OrphanedPvc[],
      options: { snapshot?: boolean; typedNames?: string[] },
    ) => {
      const { id } = await api.startPrune({
        ...(entityRef ? { entityRef } : {}),
        cluster,
        namespace: sts.namespace,
        statefulSet: sts.name,
        pvcs: pvcs.map(({ name, uid }) => ({ name, uid })),
        dryRun: dialog.dryRun,
        ...(options.snapshot !== undefined
          ? { snapshot: options.snapshot }
          : {}),
        ...(leftBy
          ? {
              leftBy: {
                ...leftBy,
                ...(options.typedNames
                  ? { typedNames: options.typedNames }
                  : {}),
              },
            }
          : {}),
      });
      started({
        id,
        dryRun: dialog.dryRun,
        cluster,
        namespace: sts.namespace,
        statefulSet: sts.name,
        pvcs: pvcs.map(p => ({
          name: p.name,
          uid: p.uid,
          bytes: claimBytes(p),
        })),
        reattached: false,
        finished: false,
      });
      setDialog(d => ({ ...d, open: false }));
    },
    [
      api,
      entityRef,
      cluster,
      sts.namespace,
      sts.name,
      dialog.dryRun,
      started,
      leftBy,
    ],
  );

  let disabledReason = pruneDeniedReason;
  if (!disabledReason && claimants.loading)
    disabledReason = 'Checking whether you may prune…';
  const deniedOnClaimant =
    !disabledReason &&
    (claimants.refused.length > 0 || claimants.missing.length > 0);
  if (deniedOnClaimant)
    disabledReason =
      claimants.refused.length > 0
        ? `Pruning ${
            sts.name
          } needs pvc-pruner.prune on every entity that claims it, and you lack it on ${listSome(
            claimants.refused,
          )}.`
        : `No entity claims ${
            sts.name
          } by its backstage.io/kubernetes-id label, only by label selectors, which do not show it is anyone's own: pruning it needs ${claimants.missing.join(
            ', ',
          )}, which you don't hold. Give the StatefulSet that label, and its entity the backstage.io/kubernetes-id annotation.`;
  if (!disabledReason && busy)
    disabledReason = `A ${job.dryRun ? 'dry run' : 'prune'} of ${
      sts.name
    } is under way.`;
  if (!disabledReason && sts.orphans.length === 0)
    disabledReason = 'Nothing to prune.';

  return (
    <Paper
      variant="outlined"
      className={classes.root}
      component="section"
      aria-label={`StatefulSet ${sts.namespace}/${sts.name}`}
    >
      {props.header ?? <StatefulSetHeader statefulSet={sts} />}
      <SharedWithNotice sharedWith={sts.sharedWith} />
      <ClaimKeeping
        entityRef={entityRef}
        cluster={cluster}
        statefulSet={sts}
        autoPrune={props.autoPrune}
        deniedReason={pruneDeniedReason}
        onChanged={props.onKeepsChanged}
      >
        {autoPruneCell =>
          sts.orphans.length > 0 ? (
            <>
              <RetainWarning sts={sts} />
              {!leftBy && <ReattachWarning sts={sts} />}
              <OrphanTable
                statefulSet={sts.name}
                orphans={sts.orphans}
                autoPrune={autoPruneCell}
              />
            </>
          ) : (
            <Typography variant="body2">No orphaned claims.</Typography>
          )
        }
      </ClaimKeeping>
      <ScaleUpNotice statefulSet={sts} />
      <TerminatingNotice statefulSet={sts} />
      <PruneActions
        statefulSet={sts.name}
        disabledReason={disabledReason}
        denied={Boolean(pruneDeniedReason) || deniedOnClaimant}
        onDryRun={() => setDialog({ open: true, dryRun: true })}
        onPrune={() => setDialog({ open: true, dryRun: false })}
      />
      <Box mt={1}>
        <KeptPvcList statefulSet={sts} />
      </Box>
      {shownJob && (
        <PruneProgress
          key={shownJob.id}
          job={shownJob}
          entityRef={entityRef}
          onFinished={finished}
          onDismiss={dismissed}
        />
      )}
      {sts.orphans.length > 0 && (
        <PruneDialog
          open={dialog.open}
          dryRun={dialog.dryRun}
          cluster={cluster}
          statefulSet={sts}
          snapshots={snapshots}
          confirmEachName={leftBy?.evidence === 'name-and-labels'}
          onClose={() => setDialog(d => ({ ...d, open: false }))}
          onConfirm={confirm}
        />
      )}
    </Paper>
  );
}

/** Fills in the sizes of a reattached job's claims from the orphan list. */
function enrich(job: ActiveJob, orphans: OrphanedPvc[]): ActiveJob {
  if (job.pvcs.every(p => p.bytes !== undefined)) return job;
  const byUid = new Map(orphans.map(o => [o.uid, claimBytes(o)]));
  return {
    ...job,
    pvcs: job.pvcs.map(p => ({ ...p, bytes: p.bytes ?? byUid.get(p.uid) })),
  };
}
