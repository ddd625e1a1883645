/**
 * The pvc-pruner frontend plugin: shows and prunes the PersistentVolumeClaims
 * that an entity's StatefulSets left behind.
 *
 * @packageDocumentation
 */

export {
  pvcPrunerPlugin,
  EntityPvcPrunerCard,
  PvcPrunerFleetPage,
} from './plugin';
export { rootRouteRef as pvcPrunerFleetRouteRef } from './routes';
export { isPvcPrunerAvailable } from './utils/isPvcPrunerAvailable';
export { pvcPrunerApiRef } from './api/PvcPrunerApi';
export type {
  PvcPrunerApi,
  GetOrphansOptions,
  ListPruneJobsRequest,
  FleetRequest,
  UnkeepClaimRequest,
  UnownedOrphansRequest,
} from './api/PvcPrunerApi';
export { PvcPrunerClient } from './api/PvcPrunerClient';
export type { PvcPrunerClientOptions } from './api/PvcPrunerClient';
export type { PvcPrunerCardProps } from './components/PvcPrunerCard';
