export { PruneProgress } from './PruneProgress';
export type { PruneProgressProps } from './PruneProgress';
