import { useApi } from '@backstage/core-plugin-api';
import useAsyncRetry from 'react-use/esm/useAsyncRetry';
import { pvcPrunerApiRef } from '../api/PvcPrunerApi';

/**
 * Loads the entity's orphaned claims. While `retry` reloads, `value` keeps
 * the previous answer so the card does not flash.
 */
export function useOrphans(entityRef: string) {
  const api = useApi(pvcPrunerApiRef);
  return useAsyncRetry(() => api.getOrphans(entityRef), [api, entityRef]);
}
