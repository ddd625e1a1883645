export { KeepClaimDialog } from './KeepClaimDialog';
export type { KeepClaimDialogProps } from './KeepClaimDialog';
