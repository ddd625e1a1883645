export {
  ClaimLineageStore,
  MAX_STORED_CLAIMANTS,
  type ClaimLineage,
  type ClaimLineageRecord,
} from './ClaimLineageStore';
export {
  claimsOfStatefulSet,
  LineageRecorder,
  type SeenStatefulSet,
} from './LineageRecorder';
export {
  WATCH_CACHE_LINEAGE_TASK_ID,
  WatchCacheLineage,
} from './WatchCacheLineage';
export {
  unverifiedClaimants,
  unverifiedOwnerReason,
} from './recordedClaimants';
export {
  ReferencedClaimUids,
  type StillReferenced,
} from './ReferencedClaimUids';
