export { ClaimAutoPrune } from './ClaimAutoPrune';
export type { ClaimAutoPruneProps } from './ClaimAutoPrune';
