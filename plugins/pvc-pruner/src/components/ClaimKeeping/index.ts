export { ClaimKeeping } from './ClaimKeeping';
export type { ClaimKeepingProps } from './ClaimKeeping';
