export { AutoscalerGuard } from './AutoscalerGuard';
export {
  autoscalerReach,
  autoscalersOf,
  hpaAsTheRuleReadsIt,
  isUnreadable,
  maxReplicasOf,
  targetsStatefulSet,
  type AutoscalerReach,
  type AutoscalersUnreadable,
  type KnownAutoscalers,
} from './autoscalerReach';
export { readAutoscalers } from './readAutoscalers';
