export { ReleasedVolumesSection } from './ReleasedVolumesSection';
export type { ReleasedVolumesSectionProps } from './ReleasedVolumesSection';
