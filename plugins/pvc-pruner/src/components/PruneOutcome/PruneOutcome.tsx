import {
  Box,
  Button,
  List,
  ListItem,
  ListItemSecondaryAction,
  ListItemText,
  Typography,
} from '@material-ui/core';
import { Alert, AlertTitle } from '@material-ui/lab';
import {
  PruneJobStatus,
  PruneSummary,
  PvcOutcome,
  describeFinalizers,
  formatBytes,
} from 'backstage-plugin-pvc-pruner-common';
import {
  SnapshotEntry,
  useSnapshotActions,
} from '../../hooks/SnapshotActionsContext';
import { formatTime, plural, summaryCounts } from '../../utils/format';
import { ReleasedVolumesOffer } from '../ReleasedVolumesOffer';

/** Props of {@link PruneOutcome}. */
export interface PruneOutcomeProps {
  dryRun: boolean;
  status: PruneJobStatus;
  reason?: string;
  summary: PruneSummary;
  /** List the deleted claims one by one (off where a progress table already shows them). */
  listDeleted?: boolean;
  /** The entity the prune went through: its Released volumes are offered for reclaiming. */
  entityRef?: string;
  /** `reclaim`: the job reclaimed Released volumes (its outcomes are volumes). */
  jobKind?: 'prune' | 'reclaim';
}

function volumeFate(outcome: PvcOutcome, dryRun: boolean): string {
  const volume = outcome.volume;
  if (!volume) return 'no bound volume';
  const policy = volume.reclaimPolicy ? ` (${volume.reclaimPolicy})` : '';
  switch (volume.fate) {
    case 'deleted':
      return `volume ${volume.name}${policy} ${
        dryRun ? 'would be' : 'was'
      } deleted`;
    case 'released':
      return `volume ${volume.name}${policy} ${
        dryRun ? 'would be' : 'is'
      } released: the disk is kept and still billed`;
    default:
      return `volume ${volume.name}${policy}: fate not known yet`;
  }
}

function abortedProgress(dryRun: boolean, deleted: PvcOutcome[]): string {
  const names = deleted.map(d => d.name).join(', ');
  if (dryRun) {
    return deleted.length > 0
      ? `Found deletable before it stopped: ${names}.`
      : 'It found nothing deletable before it stopped.';
  }
  return deleted.length > 0
    ? `Already deleted before it stopped: ${names}.`
    : 'Nothing was deleted before it stopped.';
}

function OutcomeList(props: {
  title: string;
  items: PvcOutcome[];
  describe: (o: PvcOutcome) => string;
}) {
  const { title, items, describe } = props;
  if (items.length === 0) return null;
  return (
    <Box mt={1}>
      <Typography variant="subtitle2" component="h5">
        {title}
      </Typography>
      <List dense disablePadding>
        {items.map(item => (
          <ListItem key={item.uid || item.name} disableGutters>
            <ListItemText
              primary={`${item.name}${
                item.bytes !== undefined ? ` — ${formatBytes(item.bytes)}` : ''
              }`}
              secondary={describe(item)}
            />
          </ListItem>
        ))}
      </List>
    </Box>
  );
}

/** Claims that share a reason are listed once under it. */
function ReasonList(props: { title: string; items: PvcOutcome[] }) {
  const { title, items } = props;
  if (items.length === 0) return null;
  const byReason = new Map<string, string[]>();
  for (const item of items) {
    const reason = item.reason ?? 'no reason given';
    byReason.set(reason, [...(byReason.get(reason) ?? []), item.name]);
  }
  return (
    <Box mt={1}>
      <Typography variant="subtitle2" component="h5">
        {title} ({items.length})
      </Typography>
      <List dense disablePadding>
        {[...byReason].map(([reason, names]) => (
          <ListItem key={reason} disableGutters>
            <ListItemText primary={names.join(', ')} secondary={reason} />
          </ListItem>
        ))}
      </List>
    </Box>
  );
}

/** What the job kept of one claim: its snapshot, or why it has none. */
function snapshotOutcome(outcome: PvcOutcome, dryRun: boolean): string {
  const { snapshot, noSnapshot } = outcome;
  if (!snapshot) return `No snapshot: ${noSnapshot ?? 'none was taken'}.`;
  const size =
    snapshot.restoreBytes !== undefined
      ? `, restore size ${formatBytes(snapshot.restoreBytes)}`
      : '';
  return `VolumeSnapshot ${snapshot.name}${size}; ${
    dryRun ? 'would be kept' : 'kept'
  } until ${formatTime(snapshot.expiresAt)}.`;
}

/** Restore, for a snapshot the cluster still has and the user may restore from. */
function RestoreAction(props: {
  kept?: SnapshotEntry;
  restore?: (entry: SnapshotEntry) => void;
}) {
  const { kept, restore } = props;
  if (!kept || !restore || !kept.snapshot.restorable) return null;
  return (
    <ListItemSecondaryAction>
      <Button
        size="small"
        variant="outlined"
        color="primary"
        onClick={() => restore(kept)}
        aria-label={`Restore ${kept.snapshot.claimName} from ${kept.snapshot.name}`}
      >
        Restore…
      </Button>
    </ListItemSecondaryAction>
  );
}

/** Every claim the job took a snapshot of, or said why not, whatever became of the claim. */
function SnapshotList(props: { summary: PruneSummary; dryRun: boolean }) {
  const { summary, dryRun } = props;
  const { find, restore } = useSnapshotActions();
  const items = [
    ...summary.deleted,
    ...(summary.terminating ?? []),
    ...summary.skipped,
    ...summary.failed,
  ].filter(o => o.snapshot || o.noSnapshot);
  if (items.length === 0) return null;
  return (
    <Box mt={1}>
      <Typography variant="subtitle2" component="h5">
        Snapshots ({items.filter(o => o.snapshot).length} of {items.length})
      </Typography>
      <List dense disablePadding aria-label="Snapshots">
        {items.map(item => (
          <ListItem key={item.uid || item.name} disableGutters>
            <ListItemText
              primary={item.name}
              secondary={snapshotOutcome(item, dryRun)}
            />
            <RestoreAction
              kept={item.snapshot?.uid ? find(item.snapshot.uid) : undefined}
              restore={restore}
            />
          </ListItem>
        ))}
      </List>
    </Box>
  );
}

/** "Prune", "Dry run", "Reclaim" or "Dry run of a reclaim". */
function jobTitle(dryRun: boolean, jobKind?: 'prune' | 'reclaim'): string {
  if (jobKind === 'reclaim') return dryRun ? 'Dry run of a reclaim' : 'Reclaim';
  return dryRun ? 'Dry run' : 'Prune';
}

/**
 * The end of a prune: what was deleted (and what became of each volume),
 * what is still terminating and what holds it, what was skipped and why,
 * what failed, each claim's snapshot (or why it has none), and the bytes
 * reclaimed. An
 * aborted job leads with its reason and what it had already deleted.
 */
export function PruneOutcome(props: PruneOutcomeProps) {
  const { dryRun, status, reason, summary, listDeleted = true } = props;
  const released = dryRun
    ? []
    : summary.deleted.flatMap(o =>
        o.volume?.fate === 'released' ? [o.volume.name] : [],
      );
  const { deleted, skipped, failed, bytesReclaimed } = summary;
  const terminating = summary.terminating ?? [];
  const counts = summaryCounts(summary, dryRun);
  const reclaimed = `${formatBytes(bytesReclaimed)} ${
    dryRun ? 'would be reclaimed' : 'reclaimed'
  }`;
  const kind = jobTitle(dryRun, props.jobKind);
  return (
    <Box mt={2}>
      {status === 'aborted' && (
        <Alert severity="error" role="alert">
          <AlertTitle>
            {kind} aborted{reason ? `: ${reason}` : ''}
          </AlertTitle>
          {abortedProgress(dryRun, deleted)} {counts}.
        </Alert>
      )}
      {(status === 'failed' ||
        status === 'interrupted' ||
        status === 'incomplete') && (
        <Alert
          severity={status === 'failed' ? 'error' : 'warning'}
          role="alert"
        >
          <AlertTitle>
            {kind} {status}
            {reason ? `: ${reason}` : ''}
          </AlertTitle>
          {counts}; {reclaimed}.
        </Alert>
      )}
      {status === 'succeeded' && (
        <Alert severity="success">
          <AlertTitle>{kind} finished</AlertTitle>
          {counts}; {reclaimed}.
        </Alert>
      )}
      {listDeleted && (
        <OutcomeList
          title={`${dryRun ? 'Would be deleted' : 'Deleted'} (${
            deleted.length
          })`}
          items={deleted}
          describe={o => volumeFate(o, dryRun)}
        />
      )}
      <OutcomeList
        title={`Still terminating, not deleted (${terminating.length})`}
        items={terminating}
        describe={o =>
          `${describeFinalizers(
            o.finalizers ?? [],
          )}: its deletion was accepted, and the claim and its disk stay until it finishes`
        }
      />
      <SnapshotList summary={summary} dryRun={dryRun} />
      <ReasonList title="Skipped" items={skipped} />
      <ReasonList title="Failed" items={failed} />
      <Typography variant="body2">
        <strong>{reclaimed}</strong> across {plural(deleted.length, 'claim')}.
      </Typography>
      {props.entityRef && released.length > 0 && (
        <ReleasedVolumesOffer
          entityRef={props.entityRef}
          volumeNames={released}
        />
      )}
    </Box>
  );
}
