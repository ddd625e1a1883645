import {
  createApiFactory,
  discoveryApiRef,
  fetchApiRef,
} from '@backstage/core-plugin-api';
import { kubernetesAuthProvidersApiRef } from '@backstage/plugin-kubernetes-react';
import { pvcPrunerApiRef } from './PvcPrunerApi';
import { PvcPrunerClient } from './PvcPrunerClient';

/** The API factory both frontend systems register: the client on discovery, fetch and the user's Kubernetes sign-ins. */
export const pvcPrunerClientFactory = createApiFactory({
  api: pvcPrunerApiRef,
  deps: {
    discoveryApi: discoveryApiRef,
    fetchApi: fetchApiRef,
    kubernetesAuthProvidersApi: kubernetesAuthProvidersApiRef,
  },
  factory: deps => new PvcPrunerClient(deps),
});
