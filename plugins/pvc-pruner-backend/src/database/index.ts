export {
  PruneJobStore,
  timestampToIso,
  type NewPruneJob,
  type PruneJobPatch,
} from './PruneJobStore';
export {
  OrphanSightingStore,
  type OrphanSighting,
} from './OrphanSightingStore';
