export { RestoreDialog } from './RestoreDialog';
export type { RestoreDialogProps } from './RestoreDialog';
