import { useCallback } from 'react';
import { useRouteRef } from '@backstage/core-plugin-api';
import {
  entityRouteParams,
  entityRouteRef,
} from '@backstage/plugin-catalog-react';

/**
 * Where the plugin links an entity: its Kubernetes tab, through the
 * catalog's entity route (which every Backstage app mounts).
 */
export function useEntityKubernetesPath(): (entityRef: string) => string {
  const entityRoute = useRouteRef(entityRouteRef);
  return useCallback(
    (entityRef: string) =>
      `${entityRoute(entityRouteParams(entityRef))}/kubernetes`,
    [entityRoute],
  );
}
