import { ApiBlueprint } from '@backstage/frontend-plugin-api';
import { pvcPrunerClientFactory } from '../api/pvcPrunerClientFactory';

/** The pvc-pruner API client, on the discovery and fetch APIs. */
export const pvcPrunerApi = ApiBlueprint.make({
  params: defineParams => defineParams(pvcPrunerClientFactory),
});
