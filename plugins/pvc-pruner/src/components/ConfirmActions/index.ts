export { ConfirmActions } from './ConfirmActions';
export type { ConfirmActionsProps } from './ConfirmActions';
