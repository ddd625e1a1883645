export { PruneDialog } from './PruneDialog';
export type { PruneDialogProps } from './PruneDialog';
