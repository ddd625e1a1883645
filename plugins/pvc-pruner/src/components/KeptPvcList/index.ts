export { KeptPvcList } from './KeptPvcList';
export type { KeptPvcListProps } from './KeptPvcList';
