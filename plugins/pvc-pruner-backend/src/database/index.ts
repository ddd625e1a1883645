export { timestampToIso } from './timestamps';
export {
  PruneJobStore,
  type NewPruneJob,
  type PruneJobPatch,
} from './PruneJobStore';
export {
  OrphanSightingStore,
  type InUseClaim,
  type OrphanSighting,
} from './OrphanSightingStore';
export { RetentionCleaner } from './RetentionCleaner';
