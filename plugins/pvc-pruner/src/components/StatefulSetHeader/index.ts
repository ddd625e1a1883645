export { StatefulSetHeader } from './StatefulSetHeader';
export type { StatefulSetHeaderProps } from './StatefulSetHeader';
