import { useApi } from '@backstage/core-plugin-api';
import useAsyncRetry from 'react-use/esm/useAsyncRetry';
import { pvcPrunerApiRef } from '../api/PvcPrunerApi';

/**
 * Loads the claims that deleted StatefulSets left behind, of which the
 * entity is a claimant. While `retry` reloads, `value` keeps the previous answer.
 */
export function useLeftBehind(entityRef: string, cluster?: string) {
  const api = useApi(pvcPrunerApiRef);
  return useAsyncRetry(
    () => api.getLeftBehind(entityRef, { cluster }),
    [api, entityRef, cluster],
  );
}
