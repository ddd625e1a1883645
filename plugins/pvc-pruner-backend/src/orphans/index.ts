export {
  EntityWorkloads,
  parseEntityRefStrict,
  workloadTargetOf,
  type EntityWorkloadTarget,
} from './EntityWorkloads';
export { OrphanFinder, type ClusterScan } from './OrphanFinder';
export { OrphanAnnotator, sumTotals, totalsOf } from './OrphanAnnotator';
export {
  classifyClaims,
  classifyInSnapshot,
  NamespaceSnapshot,
  parseClaimName,
  podAsTheRuleReadsIt,
  runningOrdinals,
  withVolumes,
} from './orphanRule';
