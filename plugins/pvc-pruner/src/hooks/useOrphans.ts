import { useApi } from '@backstage/core-plugin-api';
import useAsyncRetry from 'react-use/esm/useAsyncRetry';
import useInterval from 'react-use/esm/useInterval';
import { pvcPrunerApiRef } from '../api/PvcPrunerApi';

/** How often the card re-scans while it is visible, so it follows scale-ups and scale-downs. */
export const ORPHANS_REFRESH_MS = 15000;

/**
 * Loads the entity's orphaned claims, and reloads them every
 * ORPHANS_REFRESH_MS while the page is visible. While `retry` reloads,
 * `value` keeps the previous answer so the card does not flash. `cluster`
 * is the cluster the entity names, if it names one (see GetOrphansOptions).
 */
export function useOrphans(entityRef: string, cluster?: string) {
  const api = useApi(pvcPrunerApiRef);
  const state = useAsyncRetry(
    () => api.getOrphans(entityRef, { cluster }),
    [api, entityRef, cluster],
  );
  useInterval(() => {
    if (document.visibilityState === 'visible' && !state.loading) state.retry();
  }, ORPHANS_REFRESH_MS);
  return state;
}
