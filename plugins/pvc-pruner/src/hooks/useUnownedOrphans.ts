import { useApi } from '@backstage/core-plugin-api';
import useAsyncRetry from 'react-use/esm/useAsyncRetry';
import { UnownedOrphansRequest, pvcPrunerApiRef } from '../api/PvcPrunerApi';

/**
 * Loads one StatefulSet that no catalog entity claims, with its orphaned and
 * kept claims. While `retry` reloads, `value` keeps the previous answer.
 */
export function useUnownedOrphans(where: UnownedOrphansRequest) {
  const api = useApi(pvcPrunerApiRef);
  const { cluster, namespace, statefulSet, leftBy } = where;
  return useAsyncRetry(
    () =>
      api.getUnownedOrphans({
        cluster,
        namespace,
        statefulSet,
        ...(leftBy ? { leftBy } : {}),
      }),
    [api, cluster, namespace, statefulSet, leftBy],
  );
}
