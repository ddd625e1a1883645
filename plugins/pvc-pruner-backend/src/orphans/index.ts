export {
  EntityWorkloads,
  parseEntityRefStrict,
  type EntityWorkloadTarget,
} from './EntityWorkloads';
export { OrphanFinder } from './OrphanFinder';
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
