import { useCallback, useMemo, useRef } from 'react';
import { Box, Button, Typography } from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import { Progress } from '@backstage/core-components';
import {
  FleetStatefulSet,
  LeftBehindEvidence,
  PruneJob,
} from 'backstage-plugin-pvc-pruner-common';
import { ActiveJobsProvider } from '../../hooks/ActiveJobsContext';
import { useActiveJobs } from '../../hooks/useActiveJobs';
import { useUnownedOrphans } from '../../hooks/useUnownedOrphans';
import { describeError } from '../../utils/errors';
import { PricingProvider } from '../MonthlyCost';
import { StatefulSetSection } from '../StatefulSetSection';
import { LeftBehindGroupHeader, leftByOf } from '../LeftBehindSection';

/** No entity, so no history to attach to: a prune is followed from where it starts. */
const NO_HISTORY: PruneJob[] = [];

/** Props of {@link UnownedPrune}. */
export interface UnownedPruneProps {
  /** The fleet page's row of the StatefulSet. */
  statefulSet: Pick<FleetStatefulSet, 'cluster' | 'namespace' | 'name'> & {
    /** The claims a deleted StatefulSet of that name left, known by this evidence. */
    evidence?: LeftBehindEvidence;
  };
  /** Closes the panel; `pruned` when a prune or dry run finished in it. */
  onClose: (pruned: boolean) => void;
}

/**
 * Prunes a StatefulSet that no catalog entity claims, from the fleet page:
 * loads it live, then shows the card's section for it (orphans, kept
 * claims, dry run, typed confirmation, live progress), pruning without an
 * entity. With `evidence`, the same for the claims a deleted StatefulSet
 * left (pruned with `leftBy`).
 */
export function UnownedPrune(props: UnownedPruneProps) {
  const { statefulSet: row, onClose } = props;
  const name = `${row.namespace}/${row.name}`;
  const state = useUnownedOrphans({
    cluster: row.cluster,
    namespace: row.namespace,
    statefulSet: row.name,
    leftBy: row.evidence,
  });
  const { start, finish, dismiss, jobs } = useActiveJobs(NO_HISTORY);
  const pruned = useRef(false);
  const { retry } = state;
  const finished = useCallback(
    (jobId: string) => {
      finish(jobId);
      pruned.current = true;
      retry();
    },
    [finish, retry],
  );
  const active = useMemo(
    () => ({ jobs, started: start, finished, dismissed: dismiss }),
    [jobs, start, finished, dismiss],
  );

  const group = state.value?.leftBehind;
  let body;
  if (state.error && !state.value) {
    body = (
      <Alert severity="error">
        Could not load {name} in cluster {row.cluster}:{' '}
        {describeError(state.error)}
      </Alert>
    );
  } else if (!state.value) {
    body = <Progress />;
  } else {
    body = (
      <ActiveJobsProvider value={active}>
        <PricingProvider pricing={state.value.pricing}>
          <StatefulSetSection
            cluster={state.value.cluster}
            statefulSet={state.value.statefulSet}
            snapshots={state.value.snapshots}
            {...(group && {
              header: <LeftBehindGroupHeader group={group} />,
              leftBy: leftByOf(group),
            })}
          />
        </PricingProvider>
      </ActiveJobsProvider>
    );
  }
  return (
    <Box
      component="section"
      aria-label={`Prune unowned ${name} in ${row.cluster}`}
      py={1}
    >
      <Box display="flex" alignItems="center" justifyContent="space-between">
        <Typography variant="subtitle1" component="h4">
          Cluster {row.cluster} · no catalog entity claims{' '}
          {row.evidence ? `the claims deleted StatefulSet ${name} left` : name}
        </Typography>
        <Button
          size="small"
          onClick={() => onClose(pruned.current)}
          aria-label={`Close the prune of ${name}`}
        >
          Close
        </Button>
      </Box>
      {state.error && state.value && (
        <Alert severity="warning">
          Could not refresh; showing the last answer:{' '}
          {describeError(state.error)}
        </Alert>
      )}
      {body}
    </Box>
  );
}

/** The fleet page's "Prune…" of an unowned row: opens its UnownedPrune, disabled while open. */
export function UnownedPruneButton(props: {
  open: boolean;
  onOpen: () => void;
  /** What it prunes, for screen readers. */
  label: string;
}) {
  return (
    <Button
      size="small"
      variant="outlined"
      color="secondary"
      disabled={props.open}
      onClick={props.onOpen}
      aria-label={props.label}
    >
      Prune…
    </Button>
  );
}
