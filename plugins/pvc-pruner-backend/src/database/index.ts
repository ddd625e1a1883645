export { timestampToIso } from './timestamps';
export {
  PruneJobStore,
  type AutomaticJob,
  type NewPruneJob,
  type PruneJobPatch,
} from './PruneJobStore';
export {
  OrphanSightingStore,
  type InUseClaim,
  type OrphanSighting,
} from './OrphanSightingStore';
export { RetentionCleaner } from './RetentionCleaner';
