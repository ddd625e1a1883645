export {
  EntityWorkloads,
  parseEntityRefStrict,
  workloadTargetOf,
  type EntityWorkloadTarget,
} from './EntityWorkloads';
export { errorSection, OrphanFinder, type ClusterScan } from './OrphanFinder';
export {
  IN_USE_CLAIMS_TASK_ID,
  InUseClaimsSweeper,
} from './InUseClaimsSweeper';
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
  isPaused,
  NamespaceSnapshot,
  parseClaimName,
  podAsTheRuleReadsIt,
  runningOrdinals,
  WATCH_CACHE_TRIMMERS,
  withVolumes,
  type OrphanRuleInput,
  type PausedStatefulSets,
  type ScaleUpSignals,
} from './orphanRule';
export type { Admission, Admit } from './admitted';
export {
  assertWithinTarget,
  selectedStatefulSet,
  type StatefulSetAddress,
} from './selectedStatefulSet';
