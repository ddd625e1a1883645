export { TooManyRequestsError } from './TooManyRequestsError';
export {
  RUNNING_JOBS_PER_STATEFULSET,
  RunningJobLimits,
  type ActiveJobCounter,
  type RunningJobLimitsOptions,
  type RunningJobScope,
} from './RunningJobLimits';
export { OpenStreamLimits } from './OpenStreamLimits';
