export {
  PruneJobStore,
  timestampToIso,
  type NewPruneJob,
  type PruneJobPatch,
} from './PruneJobStore';
