export { UnownedPrune, UnownedPruneButton } from './UnownedPrune';
export type { UnownedPruneProps } from './UnownedPrune';
