import { useEffect, useMemo, useRef } from 'react';
import {
  Box,
  Button,
  LinearProgress,
  Paper,
  Typography,
  makeStyles,
} from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import { useApi } from '@backstage/core-plugin-api';
import useAsync from 'react-use/esm/useAsync';
import { pvcPrunerApiRef } from '../../api/PvcPrunerApi';
import { ActiveJob } from '../../hooks/useActiveJobs';
import {
  deriveProgress,
  summaryFromProgress,
} from '../../state/pruneProgressReducer';
import { useJobStream } from '../../hooks/useJobStream';
import { describeError } from '../../utils/errors';
import { jobRequester } from '../../utils/autoPrune';
import { jobTitle, plural } from '../../utils/format';
import { EventLog } from '../EventLog';
import { JobStatusLabel } from '../JobStatusLabel';
import { PruneOutcome } from '../PruneOutcome';
import { PvcProgressTable } from '../PvcProgressTable';

const useStyles = makeStyles(theme => ({
  root: { padding: theme.spacing(2), marginTop: theme.spacing(2) },
  header: {
    display: 'flex',
    alignItems: 'center',
    gap: theme.spacing(2),
    flexWrap: 'wrap',
  },
}));

/** Props of {@link PruneProgress}. */
export interface PruneProgressProps {
  job: ActiveJob;
  /** Called once, when the job-finished event arrives. */
  onFinished?: (jobId: string) => void;
  /** Closes the panel after the job finished. */
  onDismiss?: (jobId: string) => void;
  /** The entity the prune went through (its Released volumes are offered for reclaiming). */
  entityRef?: string;
}

/**
 * Follows one prune live: a determinate bar (claims with a final event over
 * the confirmed count), each claim's state, the event log, then the summary.
 */
export function PruneProgress(props: PruneProgressProps) {
  const { job, onFinished, onDismiss } = props;
  const classes = useStyles();
  const api = useApi(pvcPrunerApiRef);
  const stream = useJobStream(job.id);
  const progress = useMemo(
    () => deriveProgress(job.pvcs, stream.events, job.kind),
    [job.pvcs, stream.events, job.kind],
  );
  const finished = progress.status !== undefined;

  const reported = useRef(false);
  useEffect(() => {
    if (!finished || reported.current) return;
    reported.current = true;
    onFinished?.(job.id);
  }, [finished, job.id, onFinished]);

  const details = useAsync(
    async () => (finished ? api.getJob(job.id) : undefined),
    [api, finished, job.id],
  );

  const status = progress.status ?? (progress.started ? 'running' : 'queued');
  const percent =
    progress.total > 0 ? Math.round((progress.done / progress.total) * 100) : 0;
  const reclaim = job.kind === 'reclaim';
  const kind = jobTitle(job.dryRun, job.kind);
  const label = reclaim
    ? `${kind} of ${plural(job.pvcs.length, 'Released volume')} of ${
        job.namespace
      }/${job.statefulSet}`
    : `${kind} of ${job.namespace}/${job.statefulSet}`;

  return (
    <Paper
      variant="outlined"
      className={classes.root}
      aria-label={`${label} progress`}
      component="section"
    >
      <Box className={classes.header}>
        <Typography variant="subtitle1" component="h5">
          {label} in {job.cluster}
        </Typography>
        <JobStatusLabel status={status} />
      </Box>
      {job.reattached && (
        <Typography variant="body2" color="textSecondary">
          This {kind.toLowerCase()} was already under way
          {job.requestedBy &&
            `, ${job.automaticRunId ? '' : 'started '}${jobRequester(job)}`}
          ; showing it from the start.
        </Typography>
      )}
      <Box mt={1} mb={1}>
        <LinearProgress
          variant="determinate"
          value={percent}
          aria-label={`${label}: ${reclaim ? 'volumes' : 'claims'} done`}
        />
        <Typography variant="body2" role="status">
          {progress.done} of {progress.total} {reclaim ? 'volumes' : 'claims'}{' '}
          done
        </Typography>
      </Box>
      {finished && (
        <Box mb={2}>
          <PruneOutcome
            dryRun={job.dryRun}
            status={status}
            reason={
              details.value?.reason ??
              (status === 'succeeded'
                ? undefined
                : progress.finishedEvent?.message)
            }
            summary={details.value?.summary ?? summaryFromProgress(progress)}
            // A reclaim lists its volumes here: the claim table below is for prunes.
            listDeleted={reclaim}
            entityRef={reclaim ? undefined : props.entityRef}
            jobKind={job.kind}
          />
        </Box>
      )}
      {!reclaim && (
        <PvcProgressTable pvcs={progress.pvcs} dryRun={job.dryRun} />
      )}
      {stream.error && (
        <Box mt={2}>
          <Alert severity="warning">
            Lost the event stream: {describeError(stream.error)}. The job goes
            on in the backend; refresh to see where it is.
          </Alert>
        </Box>
      )}
      <Box mt={2}>
        <Typography variant="subtitle2" component="h6">
          Events
        </Typography>
        <EventLog events={stream.events} label={`${label} events`} />
      </Box>
      {finished && onDismiss && (
        <Box mt={1} display="flex" justifyContent="flex-end">
          <Button
            size="small"
            onClick={() => onDismiss(job.id)}
            aria-label={`Close the results of the ${label}`}
          >
            Close
          </Button>
        </Box>
      )}
    </Paper>
  );
}
