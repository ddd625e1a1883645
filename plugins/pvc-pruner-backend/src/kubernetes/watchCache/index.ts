export { ClusterCache, type WatchCacheTrimmers } from './ClusterCache';
export { type CacheUse, ClusterCaches } from './ClusterCaches';
export { IndexedStore } from './IndexedStore';
export {
  parseLabelSelector,
  requiredKeyOf,
  singleEqualityOf,
} from './labelSelector';
export { Reflector, type ReflectorTiming } from './Reflector';
