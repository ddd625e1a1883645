import { useEffect, useRef, useState } from 'react';
import {
  Box,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  List,
  ListItem,
  ListItemText,
  Typography,
} from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import { useApi } from '@backstage/core-plugin-api';
import useAsync from 'react-use/esm/useAsync';
import {
  formatBytes,
  ReleasedVolume,
} from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerApiRef } from '../../api/PvcPrunerApi';
import { useJobStream } from '../../hooks/useJobStream';
import { describeError } from '../../utils/errors';
import { formatTime, plural } from '../../utils/format';
import { EventLog } from '../EventLog';
import { JobStatusLabel } from '../JobStatusLabel';
import { MonthlyCost } from '../MonthlyCost';

/** Props of {@link ReclaimDialog}. */
export interface ReclaimDialogProps {
  open: boolean;
  onClose: () => void;
  /** Released volumes of one cluster and one namespace's claims, as listed. */
  volumes: ReleasedVolume[];
  /** The entity whose card the reclaim comes from, recorded with the job. */
  entityRef?: string;
  /** Called once a real (not dry) reclaim has finished. */
  onReclaimed?: () => void;
}

/** One started job: its events, its status, and its outcome line once it finished. */
function ReclaimJob(props: {
  jobId: string;
  dryRun: boolean;
  onFinished?: () => void;
}) {
  const { jobId, dryRun } = props;
  const api = useApi(pvcPrunerApiRef);
  const stream = useJobStream(jobId);
  const finished = stream.events.find(e => e.type === 'job-finished');
  const job = useAsync(
    async () => (finished ? api.getJob(jobId) : undefined),
    [api, jobId, finished],
  );
  const label = dryRun ? 'Dry run of the reclaim' : 'Reclaim';
  const done = Boolean(finished && !dryRun);
  const { onFinished } = props;
  const reported = useRef(false);
  useEffect(() => {
    if (!done || reported.current) return;
    reported.current = true;
    onFinished?.();
  }, [done, onFinished]);
  return (
    <Box mt={2} component="section" aria-label={`${label} progress`}>
      <Box display="flex" alignItems="center" gridGap={8}>
        <Typography variant="subtitle2" component="h5">
          {label}
        </Typography>
        <JobStatusLabel status={finished?.status ?? 'running'} />
      </Box>
      {finished && (
        <Alert
          severity={finished.status === 'succeeded' ? 'success' : 'warning'}
          role="status"
        >
          {finished.message}
          {job.value &&
            job.value.summary.skipped.length + job.value.summary.failed.length >
              0 && (
              <List dense disablePadding>
                {[
                  ...job.value.summary.skipped,
                  ...job.value.summary.failed,
                ].map(o => (
                  <ListItem key={o.uid || o.name} disableGutters>
                    <ListItemText primary={o.name} secondary={o.reason} />
                  </ListItem>
                ))}
              </List>
            )}
        </Alert>
      )}
      {stream.error && (
        <Alert severity="warning">
          Lost the event stream: {describeError(stream.error)}. The job goes on
          in the backend; refresh to see where it is.
        </Alert>
      )}
      <EventLog events={stream.events} label={`${label} events`} />
    </Box>
  );
}

/**
 * Reclaims Released volumes: lists what will go (size, class, cost, the
 * claim it held), offers a dry run first, then follows the job: each volume
 * is checked again, its reclaim policy set to Delete, and followed until its
 * provisioner has deleted the disk.
 */
export function ReclaimDialog(props: ReclaimDialogProps) {
  const { open, onClose, volumes, entityRef, onReclaimed } = props;
  const api = useApi(pvcPrunerApiRef);
  const [started, setStarted] = useState<{ id: string; dryRun: boolean }>();
  const [error, setError] = useState<Error>();
  const [busy, setBusy] = useState(false);
  const reclaimable = volumes.filter(v => v.canReclaim);
  const bytes = reclaimable.reduce((n, v) => n + v.bytes, 0);

  const start = async (dryRun: boolean) => {
    if (reclaimable.length === 0) return;
    setBusy(true);
    setError(undefined);
    try {
      const [first] = reclaimable;
      const { id } = await api.startReclaim({
        cluster: first.cluster,
        namespace: first.claim.namespace,
        ...(entityRef ? { entityRef } : {}),
        volumes: reclaimable.map(v => ({
          name: v.name,
          uid: v.uid,
          resourceVersion: v.resourceVersion,
          claimUid: v.claim.uid,
        })),
        dryRun,
      });
      setStarted({ id, dryRun });
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog open={open} onClose={onClose} maxWidth="md" fullWidth>
      <DialogTitle>
        Reclaim {plural(reclaimable.length, 'Released volume')}
      </DialogTitle>
      <DialogContent>
        <Typography variant="body2">
          Each volume&apos;s claim is gone, but its disk is kept and billed
          (reclaim policy Retain). Reclaiming sets its reclaim policy to Delete;
          its provisioner then deletes the disk and its data, for good. Each
          volume is checked again first: one that is bound again or changed
          since this list is left alone.
        </Typography>
        <List dense aria-label="Volumes to reclaim">
          {reclaimable.map(v => (
            <ListItem key={v.uid} disableGutters>
              <ListItemText
                primary={`${v.name} — ${formatBytes(v.bytes)}${
                  v.storageClass ? ` on ${v.storageClass}` : ''
                }`}
                secondary={
                  <>
                    held claim {v.claim.namespace}/{v.claim.name}
                    {v.releasedSince
                      ? `; Released since ${formatTime(v.releasedSince)}`
                      : ''}
                    <MonthlyCost amount={v.monthlyCost} prefix="; " />
                  </>
                }
              />
            </ListItem>
          ))}
        </List>
        <Typography variant="body2">
          <strong>{formatBytes(bytes)}</strong> would be reclaimed.
        </Typography>
        {error && (
          <Box mt={2}>
            <Alert severity="error" role="alert">
              {describeError(error)}
            </Alert>
          </Box>
        )}
        {started && (
          <ReclaimJob
            key={started.id}
            jobId={started.id}
            dryRun={started.dryRun}
            onFinished={onReclaimed}
          />
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Close</Button>
        <Button
          onClick={() => start(true)}
          disabled={busy || reclaimable.length === 0}
        >
          Dry run
        </Button>
        <Button
          color="secondary"
          variant="contained"
          onClick={() => start(false)}
          disabled={
            busy || reclaimable.length === 0 || (started && !started.dryRun)
          }
        >
          Reclaim {formatBytes(bytes)}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
