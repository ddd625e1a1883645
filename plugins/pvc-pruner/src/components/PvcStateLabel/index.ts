export { PvcStateLabel } from './PvcStateLabel';
export type { PvcStateLabelProps } from './PvcStateLabel';
