import {
  ApiBlueprint,
  discoveryApiRef,
  fetchApiRef,
} from '@backstage/frontend-plugin-api';
import { kubernetesAuthProvidersApiRef } from '@backstage/plugin-kubernetes-react';
import { pvcPrunerApiRef } from '../api/PvcPrunerApi';
import { PvcPrunerClient } from '../api/PvcPrunerClient';

/** The pvc-pruner API client, on the discovery and fetch APIs. */
export const pvcPrunerApi = ApiBlueprint.make({
  params: defineParams =>
    defineParams({
      api: pvcPrunerApiRef,
      deps: {
        discoveryApi: discoveryApiRef,
        fetchApi: fetchApiRef,
        kubernetesAuthProvidersApi: kubernetesAuthProvidersApiRef,
      },
      factory: ({ discoveryApi, fetchApi, kubernetesAuthProvidersApi }) =>
        new PvcPrunerClient({
          discoveryApi,
          fetchApi,
          kubernetesAuthProvidersApi,
        }),
    }),
});
