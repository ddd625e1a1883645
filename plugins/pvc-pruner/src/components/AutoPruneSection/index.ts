export { AutoPruneSection } from './AutoPruneSection';
export type { AutoPruneSectionProps } from './AutoPruneSection';
