export { ReclaimJobReaders } from './ReclaimJobReaders';
export { ReclaimPermissions } from './ReclaimPermissions';
export { ReleasedVolumes, MAX_LISTED_VOLUMES } from './ReleasedVolumes';
export {
  PROVISIONED_BY,
  releasedVolumeFacts,
  STATIC_VOLUME_REASON,
  whyNotReclaimable,
  withReclaimFields,
} from './releasedVolumeRule';
export { VolumeAttribution, type Attribution } from './VolumeAttribution';
export { reclaimLeaseName, VolumeReclaimJobs } from './VolumeReclaimJobs';
export { VolumeReclaimRunner } from './VolumeReclaimRunner';
