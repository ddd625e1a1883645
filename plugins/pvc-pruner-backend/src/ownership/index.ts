export { ClaimantIndex } from './ClaimantIndex';
export { ClaimantJobReaders } from './ClaimantJobReaders';
export { NamespaceOwners, namedOwners } from './NamespaceOwners';
export {
  admitReadersOf,
  catalogUidOf,
  listRefs,
  OwnershipChecks,
  refusedReads,
  type AuthorizedPrune,
  type ClaimantAtRequest,
  type ClaimedStatefulSet,
  type ReadVerdict,
} from './OwnershipChecks';
export { OwnershipGuards } from './OwnershipGuard';
export {
  KUBERNETES_ENTITIES,
  WORKLOAD_FIELDS,
  WorkloadCatalog,
  type WorkloadCatalogOptions,
} from './WorkloadCatalog';
export {
  ownerOf,
  selectsByKubernetesId,
  workloadEntityOf,
  type WorkloadEntity,
} from './WorkloadEntity';
