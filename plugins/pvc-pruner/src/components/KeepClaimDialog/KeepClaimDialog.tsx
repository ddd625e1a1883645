import { useState } from 'react';
import {
  Box,
  Dialog,
  DialogContent,
  DialogTitle,
  TextField,
  Typography,
} from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import { useApi } from '@backstage/core-plugin-api';
import { ClaimKeep, OrphanedPvc } from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerApiRef } from '../../api/PvcPrunerApi';
import { describeError } from '../../utils/errors';
import { DAY_MS, dateOnly, endOfDay } from '../../utils/format';
import { ConfirmActions } from '../ConfirmActions';

/** The backend's caps: a reason of at most 500 characters, an end at most a year ahead. */
const MAX_REASON = 500;
const MAX_UNTIL_MS = 365 * DAY_MS;

/** Props of {@link KeepClaimDialog}. */
export interface KeepClaimDialogProps {
  entityRef: string;
  cluster: string;
  namespace: string;
  statefulSet: string;
  /** The claim to keep; the dialog is closed without one. */
  claim?: Pick<OrphanedPvc, 'name' | 'uid'>;
  onClose: () => void;
  onKept: (keep: ClaimKeep) => void;
}

/**
 * Keeps a claim from automatic pruning: asks why (required) and until when
 * (optional), and stores it with who and when. A person's prune still may
 * delete it; the prune dialog warns.
 */
export function KeepClaimDialog(props: KeepClaimDialogProps) {
  const { entityRef, cluster, namespace, statefulSet, claim } = props;
  const api = useApi(pvcPrunerApiRef);
  const [reason, setReason] = useState('');
  const [until, setUntil] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error>();
  const close = () => {
    setReason('');
    setUntil('');
    setError(undefined);
    props.onClose();
  };
  if (!claim) return null;
  const keep = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const kept = await api.keepClaim({
        entityRef,
        cluster,
        namespace,
        statefulSet,
        claim: { name: claim.name, uid: claim.uid },
        reason: reason.trim(),
        ...(until ? { until: endOfDay(until) } : {}),
      });
      setReason('');
      setUntil('');
      props.onKept(kept);
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
    }
  };
  const titleId = `keep-claim-title-${claim.uid}`;
  return (
    <Dialog open onClose={busy ? undefined : close} aria-labelledby={titleId}>
      <DialogTitle id={titleId}>Keep {claim.name}</DialogTitle>
      <DialogContent>
        <Typography variant="body2" paragraph>
          Automatic pruning will not delete {claim.name} while it is kept. A
          person's prune still can. Your name and the reason are shown on the
          card.
        </Typography>
        <TextField
          id={`keep-claim-reason-${claim.uid}`}
          fullWidth
          required
          margin="dense"
          variant="outlined"
          label="Reason"
          value={reason}
          onChange={e => setReason(e.target.value)}
          disabled={busy}
          inputProps={{ maxLength: MAX_REASON }}
        />
        <Box mt={2}>
          <TextField
            id={`keep-claim-until-${claim.uid}`}
            type="date"
            label="Keep until (optional)"
            value={until}
            onChange={e => setUntil(e.target.value)}
            disabled={busy}
            helperText="Empty: until someone stops keeping it."
            inputProps={{
              min: dateOnly(Date.now() + DAY_MS),
              max: dateOnly(Date.now() + MAX_UNTIL_MS),
            }}
            InputLabelProps={{ shrink: true }}
          />
        </Box>
        {error && (
          <Box mt={2}>
            <Alert severity="error" role="alert">
              Not kept: {describeError(error)}
            </Alert>
          </Box>
        )}
      </DialogContent>
      <ConfirmActions
        busy={busy}
        disabled={reason.trim() === ''}
        onCancel={close}
        onConfirm={keep}
      >
        {busy ? 'Keeping…' : 'Keep'}
      </ConfirmActions>
    </Dialog>
  );
}
