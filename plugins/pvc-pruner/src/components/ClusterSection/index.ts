export { ClusterSection } from './ClusterSection';
export type { ClusterSectionProps } from './ClusterSection';
