import {
  Accordion,
  AccordionDetails,
  AccordionSummary,
  Box,
  Button,
  Chip,
  Typography,
  makeStyles,
} from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import ExpandMoreIcon from '@material-ui/icons/ExpandMore';
import { Progress } from '@backstage/core-components';
import {
  PruneJob,
  TERMINAL_JOB_STATUSES,
} from 'backstage-plugin-pvc-pruner-common';
import { JobHistoryState } from '../../hooks/useJobHistory';
import { useJobStream } from '../../hooks/useJobStream';
import { describeError } from '../../utils/errors';
import { jobRequester } from '../../utils/autoPrune';
import {
  formatAge,
  formatTime,
  plural,
  summaryCounts,
} from '../../utils/format';
import { EventLog } from '../EventLog';
import { JobStatusLabel } from '../JobStatusLabel';
import { PruneOutcome } from '../PruneOutcome';

const useStyles = makeStyles(theme => ({
  summary: {
    display: 'flex',
    alignItems: 'center',
    flexWrap: 'wrap',
    gap: theme.spacing(1.5),
    width: '100%',
  },
  status: { minWidth: 110 },
  kind: { minWidth: 96 },
  details: { display: 'block' },
  muted: { color: theme.palette.text.secondary },
}));

/** Props of {@link JobHistory}. */
export interface JobHistoryProps {
  history: JobHistoryState;
}

function JobDetails({ job }: { job: PruneJob }) {
  const stream = useJobStream(job.id);
  const finished = TERMINAL_JOB_STATUSES.includes(job.status);
  return (
    <Box>
      <Typography variant="body2">
        {plural(job.pvcs.length, job.kind === 'reclaim' ? 'volume' : 'claim')}{' '}
        confirmed: {job.pvcs.map(p => p.name).join(', ')}
      </Typography>
      {finished && (
        <PruneOutcome
          dryRun={job.dryRun}
          status={job.status}
          reason={job.reason}
          summary={job.summary}
          entityRef={job.kind === 'reclaim' ? undefined : job.entityRef}
          jobKind={job.kind}
        />
      )}
      <Box mt={2}>
        <Typography variant="subtitle2" component="h6">
          Events
        </Typography>
        {stream.error ? (
          <Alert severity="error">
            Could not read the events: {describeError(stream.error)}
          </Alert>
        ) : (
          <EventLog
            events={stream.events}
            label={`Events of the job started ${formatTime(job.createdAt)}`}
          />
        )}
      </Box>
    </Box>
  );
}

function jobKindLabel(job: PruneJob): string {
  if (job.kind === 'reclaim')
    return job.dryRun ? 'Dry run of a reclaim' : 'Volume reclaim';
  return job.dryRun ? 'Dry run' : 'Real prune';
}

function JobRow({ job }: { job: PruneJob }) {
  const classes = useStyles();
  const finished = TERMINAL_JOB_STATUSES.includes(job.status);
  return (
    <Accordion TransitionProps={{ unmountOnExit: true }} variant="outlined">
      <AccordionSummary
        expandIcon={<ExpandMoreIcon />}
        aria-controls={`job-${job.id}-content`}
        id={`job-${job.id}-header`}
      >
        <Box className={classes.summary}>
          <Box className={classes.status}>
            <JobStatusLabel status={job.status} />
          </Box>
          <Box className={classes.kind}>
            <Chip size="small" variant="outlined" label={jobKindLabel(job)} />
          </Box>
          <Typography variant="body2">
            {job.kind === 'reclaim'
              ? `${plural(job.pvcs.length, 'Released volume')} of claims in ${
                  job.namespace
                }`
              : `${job.namespace}/${job.statefulSet}`}{' '}
            in {job.cluster}
          </Typography>
          <Typography variant="body2" className={classes.muted}>
            {jobRequester(job)},{' '}
            <span title={formatTime(job.createdAt)}>
              {formatAge(job.createdAt)} ago
            </span>
          </Typography>
          {finished && (
            <Typography variant="body2" className={classes.muted}>
              {summaryCounts(job.summary, job.dryRun, job.kind)}
            </Typography>
          )}
        </Box>
      </AccordionSummary>
      <AccordionDetails
        id={`job-${job.id}-content`}
        className={classes.details}
      >
        <JobDetails job={job} />
      </AccordionDetails>
    </Accordion>
  );
}

/** The entity's last prunes: who, when, dry run or real, outcome; each opens to its events. */
export function JobHistory(props: JobHistoryProps) {
  const { history } = props;
  return (
    <Box component="section" aria-label="Prune history" mt={2}>
      <Typography variant="h5" component="h3" gutterBottom>
        Prune history
      </Typography>
      {history.error && (
        <Alert severity="error">
          Could not load the prune history: {describeError(history.error)}
        </Alert>
      )}
      {!history.loaded && history.loading && <Progress />}
      {history.loaded && history.jobs.length === 0 && (
        <Typography variant="body2">No prunes or dry runs yet.</Typography>
      )}
      {history.jobs.map(job => (
        <JobRow key={job.id} job={job} />
      ))}
      {history.hasMore && (
        <Box mt={1}>
          <Button
            size="small"
            onClick={history.loadMore}
            disabled={history.loading}
            aria-label="Load older prunes"
          >
            Load older
          </Button>
        </Box>
      )}
    </Box>
  );
}
