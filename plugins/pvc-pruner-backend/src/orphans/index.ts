export {
  EntityWorkloads,
  KUBERNETES_ID_ANNOTATION,
  KUBERNETES_LABEL_SELECTOR_ANNOTATION,
  parseEntityRefStrict,
  workloadTargetOf,
  type EntityWorkloadTarget,
} from './EntityWorkloads';
export { clusterFailure, OrphanFinder, type ClusterScan } from './OrphanFinder';
export {
  firstSeenOf,
  OrphanAnnotator,
  sumTotals,
  totalsOf,
} from './OrphanAnnotator';
export {
  claimAsTheRuleReadsIt,
  classifyClaims,
  classifyInSnapshot,
  NamespaceSnapshot,
  parseClaimName,
  podAsTheRuleReadsIt,
  runningOrdinals,
  WATCH_CACHE_TRIMMERS,
  withVolumes,
} from './orphanRule';
