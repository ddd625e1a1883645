import { useEffect, useMemo, useRef, useState } from 'react';
import {
  Box,
  Button,
  Checkbox,
  Dialog,
  DialogActions,
  DialogContent,
  DialogContentText,
  DialogTitle,
  FormControlLabel,
  FormHelperText,
  List,
  ListItem,
  ListItemIcon,
  ListItemText,
  TextField,
  Typography,
  makeStyles,
} from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import WarningIcon from '@material-ui/icons/Warning';
import {
  OrphanedPvc,
  SnapshotSettings,
  StatefulSetOrphans,
  formatBytes,
} from 'backstage-plugin-pvc-pruner-common';
import { claimBytes, claimSize, plural, podName } from '../../utils/format';
import { describeError, isTooManyRequests } from '../../utils/errors';
import { describeClaimKeep } from '../../utils/autoPrune';

const useStyles = makeStyles(theme => ({
  list: {
    maxHeight: 320,
    overflowY: 'auto',
    border: `1px solid ${theme.palette.divider}`,
  },
  retained: {
    color: theme.palette.warning.dark,
    display: 'inline-flex',
    alignItems: 'center',
    gap: theme.spacing(0.5),
  },
  // Its own line, wrapped: a reason names classes and annotations, longer than the dialog is wide.
  snapshotNote: {
    display: 'block',
    whiteSpace: 'normal',
    overflowWrap: 'anywhere',
  },
}));

/** Props of {@link PruneDialog}. */
export interface PruneDialogProps {
  open: boolean;
  dryRun: boolean;
  cluster: string;
  statefulSet: StatefulSetOrphans;
  /** `pvcPruner.snapshots` as the orphans answer says; the snapshot choice is offered only when enabled. */
  snapshots?: SnapshotSettings;
  onClose: () => void;
  /**
   * Asks for each chosen claim's name to be typed, dry run or not (claims
   * known only by their name and labels); the names go to `onConfirm`.
   */
  confirmEachName?: boolean;
  /**
   * Sends exactly these claims; a rejection is shown in the dialog.
   * `snapshot` is set only when snapshots are enabled, `typedNames` only
   * with `confirmEachName`.
   */
  onConfirm: (
    pvcs: OrphanedPvc[],
    options: { snapshot?: boolean; typedNames?: string[] },
  ) => Promise<void>;
}

/**
 * What a prune that keeps snapshots does with the claim before deleting it;
 * `kept` when the claim would not be deleted.
 */
function snapshotNote(
  pvc: OrphanedPvc,
  required: boolean,
): { text: string; kept: boolean } {
  const plan = pvc.snapshotPlan;
  if (!plan) return { text: 'Snapshot: not known.', kept: false };
  switch (plan.kind) {
    case 'class':
      return {
        text: `Snapshot with VolumeSnapshotClass ${plan.volumeSnapshotClass}, deleted once it is ready.`,
        kept: false,
      };
    case 'not-needed':
      return {
        text: pvc.volume?.retained
          ? 'No snapshot needed: the volume itself survives (Retain).'
          : `No snapshot: ${plan.reason}.`,
        kept: false,
      };
    case 'none':
      return required
        ? {
            text: `No VolumeSnapshotClass, so it is not deleted: ${plan.reason}.`,
            kept: true,
          }
        : {
            text: `No VolumeSnapshotClass, so it is deleted without a snapshot: ${plan.reason}.`,
            kept: false,
          };
    default:
      return {
        text: `No snapshot can be taken, so it is not deleted: ${plan.reason}.`,
        kept: true,
      };
  }
}

/** Warns that chosen claims are kept from automatic pruning, and by whom: a person's prune deletes them anyway. */
function KeptClaimsWarning(props: { chosen: OrphanedPvc[]; dryRun: boolean }) {
  const kept = props.chosen.filter(o => o.keep);
  if (kept.length === 0) return null;
  const of =
    props.chosen.length === 1
      ? 'This claim is'
      : `${kept.length} of these claims are`;
  return (
    <Box mt={2}>
      <Alert severity="warning">
        {of} kept from automatic pruning;{' '}
        {props.dryRun ? 'a prune would delete' : 'pruning deletes'}{' '}
        {kept.length === 1 ? 'it' : 'them'} anyway:
        <ul style={{ margin: 0, paddingLeft: 20 }}>
          {kept.map(o => (
            <li key={o.uid}>
              {o.name}: {describeClaimKeep(o.keep!)}
            </li>
          ))}
        </ul>
      </Alert>
    </Box>
  );
}

/** A field in which the user types a name to confirm a prune. */
function NameToType(props: {
  label: string;
  ariaLabel: string;
  value: string;
  onChange: (value: string) => void;
  disabled: boolean;
}) {
  return (
    <TextField
      fullWidth
      margin="dense"
      variant="outlined"
      size="small"
      label={props.label}
      value={props.value}
      onChange={e => props.onChange(e.target.value)}
      disabled={props.disabled}
      inputProps={{
        'aria-label': props.ariaLabel,
        autoComplete: 'off',
        spellCheck: false,
      }}
    />
  );
}

function defaultSelection(orphans: OrphanedPvc[]): Set<string> {
  return new Set(orphans.map(o => o.uid));
}

/**
 * Confirms a prune: lists each claim that will be sent with its size and
 * its volume's fate, and for a real prune asks for the StatefulSet's name.
 */
export function PruneDialog(props: PruneDialogProps) {
  const { open, dryRun, cluster, statefulSet: sts, onClose, onConfirm } = props;
  const classes = useStyles();
  const [selected, setSelected] = useState(() => defaultSelection(sts.orphans));
  const [typed, setTyped] = useState('');
  const [typedNames, setTypedNames] = useState<Record<string, string>>({});
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<Error>();
  // Undefined until the user ticks or unticks it: then the default follows the selection.
  const [snapshotChoice, setSnapshotChoice] = useState<boolean>();
  const snapshotsOn = props.snapshots?.enabled === true;

  // Reset when the dialog opens, not when the card's periodic re-scan hands
  // it a new orphans list: that would wipe the name the user is typing.
  const latestOrphans = useRef(sts.orphans);
  latestOrphans.current = sts.orphans;
  useEffect(() => {
    if (!open) return;
    setSelected(defaultSelection(latestOrphans.current));
    setTyped('');
    setTypedNames({});
    setSnapshotChoice(undefined);
    setError(undefined);
    setSubmitting(false);
  }, [open]);

  const chosen = useMemo(
    () => sts.orphans.filter(o => selected.has(o.uid)),
    [sts.orphans, selected],
  );
  const snapshot =
    snapshotsOn &&
    (snapshotChoice ?? chosen.some(o => o.snapshotPlan?.kind === 'class'));
  const required = props.snapshots?.required ?? true;
  const notes = new Map(
    snapshot ? chosen.map(o => [o.uid, snapshotNote(o, required)]) : [],
  );
  const keptBySnapshot = chosen.filter(o => notes.get(o.uid)?.kept);
  // What the job will delete: the chosen claims less those it keeps for want of a snapshot.
  const deletable = chosen.filter(o => !notes.get(o.uid)?.kept);
  const bytes = deletable.reduce((n, o) => n + claimBytes(o), 0);
  const retainedBytes = deletable
    .filter(o => o.volume?.retained)
    .reduce((n, o) => n + claimBytes(o), 0);
  const eachNameConfirmed =
    !props.confirmEachName ||
    chosen.every(o => typedNames[o.uid]?.trim() === o.name);
  const nameConfirmed =
    (dryRun || typed.trim() === sts.name) && eachNameConfirmed;
  const canConfirm = chosen.length > 0 && nameConfirmed && !submitting;
  const titleId = `prune-dialog-title-${sts.namespace}-${sts.name}`;

  const toggle = (uid: string) =>
    setSelected(current => {
      const next = new Set(current);
      if (!next.delete(uid)) next.add(uid);
      return next;
    });

  const confirm = async () => {
    setSubmitting(true);
    setError(undefined);
    try {
      await onConfirm(chosen, {
        ...(snapshotsOn ? { snapshot } : {}),
        ...(props.confirmEachName
          ? { typedNames: chosen.map(o => typedNames[o.uid].trim()) }
          : {}),
      });
    } catch (e) {
      setError(e as Error);
      setSubmitting(false);
    }
  };

  return (
    <Dialog
      open={open}
      onClose={submitting ? undefined : onClose}
      aria-labelledby={titleId}
      maxWidth="md"
      fullWidth
    >
      <DialogTitle id={titleId}>
        {dryRun ? 'Dry run: prune' : 'Delete orphaned claims of'}{' '}
        {sts.namespace}/{sts.name}
      </DialogTitle>
      <DialogContent>
        <DialogContentText>
          {dryRun
            ? `Checks each claim below in cluster ${cluster} exactly as a prune would, without deleting anything.`
            : `Deletes the claims below in cluster ${cluster}. A volume with reclaim policy Delete is destroyed with its data; a Retain volume stays, and is still billed, until someone deletes it.`}
        </DialogContentText>
        <List dense className={classes.list} aria-label="Claims to prune">
          {sts.orphans.map(pvc => {
            const labelId = `prune-pvc-${pvc.uid}`;
            return (
              <ListItem
                key={pvc.uid}
                button
                onClick={() => toggle(pvc.uid)}
                disabled={submitting}
              >
                <ListItemIcon>
                  <Checkbox
                    edge="start"
                    checked={selected.has(pvc.uid)}
                    tabIndex={-1}
                    disableRipple
                    inputProps={{ 'aria-labelledby': labelId }}
                  />
                </ListItemIcon>
                <ListItemText
                  id={labelId}
                  primary={`${pvc.name} — ${claimSize(pvc)}`}
                  secondary={
                    <>
                      {pvc.volume?.retained ? (
                        <span className={classes.retained}>
                          <WarningIcon fontSize="inherit" aria-hidden />
                          Retain: the disk {pvc.volume.name} survives and is
                          still billed.
                        </span>
                      ) : (
                        `${
                          pvc.volume
                            ? `Volume ${pvc.volume.name} (${
                                pvc.volume.reclaimPolicy ?? 'unknown policy'
                              })`
                            : 'No bound volume'
                        }.`
                      )}{' '}
                      {`Reattached to pod ${podName(
                        sts.name,
                        pvc.ordinal,
                      )} at ≥ ${pvc.reattachesAtReplicas} replicas if kept.`}
                      {notes.has(pvc.uid) && (
                        <span className={classes.snapshotNote}>
                          {notes.get(pvc.uid)!.text}
                        </span>
                      )}
                    </>
                  }
                />
              </ListItem>
            );
          })}
        </List>
        <KeptClaimsWarning chosen={chosen} dryRun={dryRun} />
        {snapshotsOn && (
          <Box mt={2}>
            <FormControlLabel
              control={
                <Checkbox
                  checked={snapshot}
                  onChange={e => setSnapshotChoice(e.target.checked)}
                  disabled={submitting}
                  color="primary"
                />
              }
              label={`Keep a snapshot for ${plural(
                props.snapshots?.retentionDays ?? 0,
                'day',
              )}`}
            />
            <FormHelperText>
              {snapshot
                ? `A VolumeSnapshot of each claim is taken in ${sts.namespace}${
                    dryRun ? ' (as a dry run)' : ''
                  }, and the claim is deleted only once it is ready: until it expires, the claim's data can be restored.`
                : 'No snapshots: the claims are deleted as they are, and their data cannot be brought back.'}
            </FormHelperText>
            {keptBySnapshot.length > 0 && (
              <Alert severity="warning">
                {plural(keptBySnapshot.length, 'claim')} cannot be snapshotted
                and will not be deleted:{' '}
                {keptBySnapshot.map(o => o.name).join(', ')}. Untick the
                snapshot to delete {keptBySnapshot.length === 1 ? 'it' : 'them'}{' '}
                without one.
              </Alert>
            )}
          </Box>
        )}
        <Box mt={2}>
          <Typography variant="body2" role="status">
            {dryRun ? 'Will check' : 'Will delete'}{' '}
            {plural(deletable.length, 'claim')} ({formatBytes(bytes)})
            {retainedBytes > 0 &&
              `; ${formatBytes(retainedBytes)} of it stays on Retain volumes`}
            {keptBySnapshot.length > 0 &&
              `; ${plural(
                keptBySnapshot.length,
                'claim',
              )} kept for want of a snapshot`}
            .
          </Typography>
        </Box>
        {props.confirmEachName && (
          <Box mt={2} role="group" aria-label="Type each claim's name">
            <Typography variant="body2">
              Only their names and labels say whose these claims were: type each
              claim's name to confirm it.
            </Typography>
            {chosen.map(o => (
              <NameToType
                key={o.uid}
                label={`Type ${o.name}`}
                ariaLabel={`Type the claim name ${o.name} to confirm`}
                value={typedNames[o.uid] ?? ''}
                onChange={value =>
                  setTypedNames(t => ({ ...t, [o.uid]: value }))
                }
                disabled={submitting}
              />
            ))}
          </Box>
        )}
        {!dryRun && (
          <Box mt={2}>
            <NameToType
              label={`Type ${sts.name} to confirm`}
              ariaLabel={`Type the StatefulSet name ${sts.name} to confirm`}
              value={typed}
              onChange={setTyped}
              disabled={submitting}
            />
          </Box>
        )}
        {error && (
          <Box mt={2}>
            {isTooManyRequests(error) ? (
              // Nothing is wrong: too much runs at once, and the message says what to wait for.
              <Alert severity="warning">
                Not started: {describeError(error)}
              </Alert>
            ) : (
              <Alert severity="error">
                Could not start: {describeError(error)}
              </Alert>
            )}
          </Box>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose} disabled={submitting}>
          Cancel
        </Button>
        <Button
          color={dryRun ? 'primary' : 'secondary'}
          variant="contained"
          onClick={confirm}
          disabled={!canConfirm}
          aria-label={
            dryRun
              ? 'Start dry run'
              : `Delete ${plural(chosen.length, 'claim')}`
          }
        >
          {dryRun
            ? 'Start dry run'
            : `Delete ${plural(chosen.length, 'claim')}`}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
