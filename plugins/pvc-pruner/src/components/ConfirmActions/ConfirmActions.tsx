import { ReactNode } from 'react';
import { Button, DialogActions } from '@material-ui/core';

/** Props of {@link ConfirmActions}. */
export interface ConfirmActionsProps {
  /** The request is under way: both buttons wait. */
  busy: boolean;
  /** The confirm button is disabled for another reason (a field still empty). */
  disabled?: boolean;
  onCancel: () => void;
  onConfirm: () => void;
  /** The confirm button's label. */
  children: ReactNode;
}

/** A small dialog's Cancel and confirm buttons. */
export function ConfirmActions(props: ConfirmActionsProps) {
  const { busy, disabled, onCancel, onConfirm, children } = props;
  return (
    <DialogActions>
      <Button onClick={onCancel} disabled={busy}>
        Cancel
      </Button>
      <Button
        color="primary"
        variant="contained"
        onClick={onConfirm}
        disabled={busy || disabled}
      >
        {children}
      </Button>
    </DialogActions>
  );
}
