export { OrphanedVolumes } from './OrphanedVolumes';
export type { OrphanedVolumesProps } from './OrphanedVolumes';
