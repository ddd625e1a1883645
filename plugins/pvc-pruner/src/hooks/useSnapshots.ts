import { useApi } from '@backstage/core-plugin-api';
import useAsyncRetry from 'react-use/esm/useAsyncRetry';
import { pvcPrunerApiRef } from '../api/PvcPrunerApi';

/**
 * Loads the snapshots pvc-pruner kept of the entity's StatefulSets, read
 * from the clusters; `retry` reloads them after a prune, a restore or a
 * keep. `cluster` is the cluster the entity names, if any (see GetOrphansOptions).
 * Nothing is asked until `enabled` (the backend has snapshots on): a card
 * of a backend without them sends no extra request per cluster.
 */
export function useSnapshots(
  entityRef: string,
  cluster: string | undefined,
  enabled: boolean,
) {
  const api = useApi(pvcPrunerApiRef);
  return useAsyncRetry(
    async () =>
      enabled ? api.listSnapshots(entityRef, { cluster }) : undefined,
    [api, entityRef, cluster, enabled],
  );
}
