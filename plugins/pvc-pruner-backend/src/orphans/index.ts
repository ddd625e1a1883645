export {
  EntityWorkloads,
  parseEntityRefStrict,
  type EntityWorkloadTarget,
} from './EntityWorkloads';
export { OrphanFinder } from './OrphanFinder';
export {
  classifyClaims,
  classifyInSnapshot,
  NamespaceSnapshot,
  parseClaimName,
  podAsTheRuleReadsIt,
  runningOrdinals,
  withVolumes,
} from './orphanRule';
