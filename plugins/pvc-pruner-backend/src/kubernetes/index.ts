export { ClusterRegistry, type ClusterTarget } from './ClusterRegistry';
export {
  ClusterRequestError,
  KubeGateway,
  type WatchEvent,
} from './KubeGateway';
export { KubeGateways } from './KubeGateways';
export {
  ClusterCache,
  ClusterCaches,
  type WatchCacheTrimmers,
} from './watchCache';
