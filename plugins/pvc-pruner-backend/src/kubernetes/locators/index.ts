export type { ClusterLocator } from './ClusterLocator';
export { ConfigClusterLocator } from './ConfigClusterLocator';
export {
  CATALOG_AWS_ANNOTATIONS,
  CATALOG_CLUSTERS_CACHE_MS,
  CatalogClusterLocator,
} from './CatalogClusterLocator';
export { LocalKubectlProxyLocator } from './LocalKubectlProxyLocator';
export {
  GkeClusterLocator,
  type GkeCluster,
  type GkeClusterClient,
} from './GkeClusterLocator';
