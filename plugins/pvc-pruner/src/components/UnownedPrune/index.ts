export { UnownedPrune } from './UnownedPrune';
export type { UnownedPruneProps } from './UnownedPrune';
