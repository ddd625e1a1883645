export { StatefulSetSection } from './StatefulSetSection';
export type { StatefulSetSectionProps } from './StatefulSetSection';
