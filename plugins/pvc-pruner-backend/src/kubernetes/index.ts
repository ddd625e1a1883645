export { ClusterRegistry, type ClusterRegistryDeps } from './ClusterRegistry';
export {
  ClusterRequestError,
  KubeGateway,
  type KubeGatewayOptions,
  type WatchEvent,
} from './KubeGateway';
export { KubeGateways, requestAuthFor } from './KubeGateways';
export { type LocatedCluster, locatedCluster } from './LocatedCluster';
export { apiPath, type KubeResource } from './apiPath';
export type {
  VolumeSnapshot,
  VolumeSnapshotClass,
  VolumeSnapshotContent,
} from './volumeSnapshotTypes';
export {
  caOf,
  ClusterConnection,
  type ClusterEndpoint,
  type CredentialSource,
} from './ClusterConnection';
export {
  authProviderOf,
  ClusterAuth,
  CLIENT_SIDE_PROVIDERS,
  requestAuthFromHeaders,
  userTokenKeyOf,
} from './auth';
export { changedSinceChecked, clusterFailure } from './clusterFailure';
export type { GkeCluster, GkeClusterClient } from './locators';
export {
  type CacheUse,
  ClusterCache,
  ClusterCaches,
  parseLabelSelector,
  requiredKeyOf,
  singleEqualityOf,
  type WatchCacheTrimmers,
} from './watchCache';
