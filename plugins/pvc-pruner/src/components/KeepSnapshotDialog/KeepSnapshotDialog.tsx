import { useState } from 'react';
import {
  Dialog,
  DialogContent,
  DialogTitle,
  TextField,
  Typography,
} from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import { useApi } from '@backstage/core-plugin-api';
import { KeptSnapshot } from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerApiRef } from '../../api/PvcPrunerApi';
import { SnapshotEntry } from '../../hooks/SnapshotActionsContext';
import { describeError } from '../../utils/errors';
import { DAY_MS, dateOnly, endOfDay, formatTime } from '../../utils/format';
import { ConfirmActions } from '../ConfirmActions';

/** Props of {@link KeepSnapshotDialog}. */
export interface KeepSnapshotDialogProps {
  entityRef: string;
  /** The snapshot to keep longer; the dialog is closed without one. */
  entry?: SnapshotEntry;
  onClose: () => void;
  onKept: (snapshot: KeptSnapshot) => void;
}

/** Asks until when to keep a snapshot (its keep-until annotation); the backend caps how far. */
export function KeepSnapshotDialog(props: KeepSnapshotDialogProps) {
  const { entityRef, entry, onClose, onKept } = props;
  const api = useApi(pvcPrunerApiRef);
  const [date, setDate] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error>();
  const close = () => {
    setError(undefined);
    setDate(undefined);
    onClose();
  };
  if (!entry) return null;
  const { cluster, statefulSet, snapshot } = entry;
  const expires = Date.parse(snapshot.expiresAt);
  const chosen = date ?? dateOnly(expires + 7 * DAY_MS);
  const keep = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const kept = await api.keepSnapshot({
        snapshot: {
          entityRef,
          cluster,
          namespace: snapshot.namespace,
          statefulSet,
          snapshot: { name: snapshot.name, uid: snapshot.uid },
        },
        keepUntil: endOfDay(chosen),
      });
      setDate(undefined);
      onKept(kept);
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open onClose={close} aria-labelledby="keep-dialog-title">
      <DialogTitle id="keep-dialog-title">
        Keep {snapshot.name} longer
      </DialogTitle>
      <DialogContent>
        <Typography variant="body2" paragraph>
          The snapshot of {snapshot.claimName} is due to be deleted{' '}
          {formatTime(snapshot.expiresAt)}. Keep it until:
        </Typography>
        <TextField
          id="keep-until"
          type="date"
          label="Keep until"
          value={chosen}
          onChange={e => setDate(e.target.value)}
          inputProps={{ min: dateOnly(Math.max(expires, Date.now()) + DAY_MS) }}
          InputLabelProps={{ shrink: true }}
        />
        {error && (
          <Alert severity="error" role="alert">
            {describeError(error)}
          </Alert>
        )}
      </DialogContent>
      <ConfirmActions
        busy={busy}
        disabled={!chosen}
        onCancel={close}
        onConfirm={keep}
      >
        {busy ? 'Saving…' : 'Keep'}
      </ConfirmActions>
    </Dialog>
  );
}
