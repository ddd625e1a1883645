export { PruneOutcome } from './PruneOutcome';
export type { PruneOutcomeProps } from './PruneOutcome';
