export * from './autoPruneOptions';
export * from './autoPruneVerdict';
export * from './keepAnnotation';
export * from './types';
export { AutomaticPruneJobs, AUTOMATIC_REASON } from './AutomaticPruneJobs';
export { AutomaticPruneGuard, automationRefusal } from './AutomaticPruneGuard';
export { describeKeep } from './describeKeep';
export { KeepSteps } from './KeepSteps';
export { unwiredClaimKeeps } from './unwiredClaimKeeps';
