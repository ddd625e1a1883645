export { PruneActions } from './PruneActions';
export type { PruneActionsProps } from './PruneActions';
