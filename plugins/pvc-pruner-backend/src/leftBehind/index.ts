export {
  fleetLeftBehind,
  FleetLeftBehindReader,
  totalsOnce,
  type KeyedRow,
} from './FleetLeftBehind';
export { DeletedStatefulSetGuard } from './DeletedStatefulSetGuard';
export { LeftBehindAccess } from './LeftBehindAccess';
export {
  claimantsByLabels,
  LeftBehindFinder,
  wireGroup,
  type AdmitGroups,
} from './LeftBehindFinder';
export {
  isUnowned,
  leftBehindIn,
  verifiedClaimants,
  MAX_GROUP_CLAIMS,
  type FoundGroup,
  type LeftBehindInput,
} from './leftBehindGroups';
export {
  claimNameParses,
  classifyLeftBehind,
  deletedStatefulSet,
  type LeftBehindEvidence,
} from './leftBehindRule';
