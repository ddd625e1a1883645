export { ReclaimDialog } from './ReclaimDialog';
export type { ReclaimDialogProps } from './ReclaimDialog';
