import { useState } from 'react';
import {
  Dialog,
  DialogContent,
  DialogTitle,
  Typography,
} from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import { useApi } from '@backstage/core-plugin-api';
import {
  RestoreResponse,
  formatBytes,
} from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerApiRef } from '../../api/PvcPrunerApi';
import { SnapshotEntry } from '../../hooks/SnapshotActionsContext';
import { describeError } from '../../utils/errors';
import { formatTime } from '../../utils/format';
import { ConfirmActions } from '../ConfirmActions';

/** Props of {@link RestoreDialog}. */
export interface RestoreDialogProps {
  entityRef: string;
  /** The snapshot to restore from; the dialog is closed without one. */
  entry?: SnapshotEntry;
  onClose: () => void;
  onRestored: (response: RestoreResponse) => void;
}

/** Asks before re-creating a pruned claim from its snapshot, and says what will happen. */
export function RestoreDialog(props: RestoreDialogProps) {
  const { entityRef, entry, onClose, onRestored } = props;
  const api = useApi(pvcPrunerApiRef);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error>();
  const close = () => {
    setError(undefined);
    onClose();
  };
  if (!entry) return null;
  const { cluster, statefulSet, snapshot } = entry;
  const restore = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const response = await api.restoreSnapshot({
        entityRef,
        cluster,
        namespace: snapshot.namespace,
        statefulSet,
        snapshot: { name: snapshot.name, uid: snapshot.uid },
      });
      onRestored(response);
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open onClose={close} aria-labelledby="restore-dialog-title">
      <DialogTitle id="restore-dialog-title">
        Restore {snapshot.claimName}?
      </DialogTitle>
      <DialogContent>
        <Typography variant="body2" paragraph>
          Creates the claim {snapshot.claimName} again in {snapshot.namespace} (
          {cluster}), with its original labels, from VolumeSnapshot{' '}
          {snapshot.name}
          {snapshot.restoreBytes !== undefined &&
            ` (${formatBytes(snapshot.restoreBytes)})`}
          , taken {formatTime(snapshot.createdAt)}.
        </Typography>
        <Typography variant="body2" paragraph>
          {statefulSet} mounts it in a pod once it is scaled up past that
          claim's ordinal: the card then lists it as an orphan again, with the
          replica count that brings it back. The snapshot stays until it
          expires.
        </Typography>
        {error && (
          <Alert severity="error" role="alert">
            {describeError(error)}
          </Alert>
        )}
      </DialogContent>
      <ConfirmActions busy={busy} onCancel={close} onConfirm={restore}>
        {busy ? 'Restoring…' : `Restore ${snapshot.claimName}`}
      </ConfirmActions>
    </Dialog>
  );
}
