export { auditedOutcome } from './auditedOutcome';
export { InterruptedJobSweeper } from './InterruptedJobSweeper';
export { JobEvents } from './JobEvents';
export { LeaseLock, type SharedClock } from './LeaseLock';
export {
  PruneJobs,
  type JobAuthorization,
  type JobOutcomeReporter,
  type PruneJobsOptions,
} from './PruneJobs';
export { PruneRunner, type PruneResult } from './PruneRunner';
export { VolumeFollower } from './VolumeFollower';
export type {
  DeleteGuard,
  DeleteGuardFactory,
  JobRequest,
  SubjectGuard,
  SubjectGuardFactory,
} from './DeleteGuard';
export type {
  BeforeDeleteStep,
  BeforeDeleteStepFactory,
  LastCheck,
  Prepared,
} from './BeforeDeleteStep';
export type { Confirmed } from './ClaimRecheck';
