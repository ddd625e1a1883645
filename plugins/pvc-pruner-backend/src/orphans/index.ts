export {
  EntityWorkloads,
  parseEntityRefStrict,
  workloadTargetOf,
  type EntityWorkloadTarget,
} from './EntityWorkloads';
export { errorSection, OrphanFinder, type ClusterScan } from './OrphanFinder';
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
export type { Admission, Admit } from './admitted';
