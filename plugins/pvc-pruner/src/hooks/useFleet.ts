import { useApi } from '@backstage/core-plugin-api';
import { FleetResponse } from 'backstage-plugin-pvc-pruner-common';
import useAsyncRetry from 'react-use/esm/useAsyncRetry';
import { FleetRequest, pvcPrunerApiRef } from '../api/PvcPrunerApi';

/** Entities per request: the backend's largest page. */
export const FLEET_PAGE_SIZE = 500;

/** The fleet page's filters, applied by the backend. */
export type FleetFilters = Pick<
  FleetRequest,
  'cluster' | 'namespace' | 'owner'
>;

/**
 * Loads every page of the fleet for the filters, as one answer (the totals,
 * owners and unowned section of the first page describe them all). Does
 * nothing while `enabled` is false.
 */
export function useFleet(filters: FleetFilters, enabled = true) {
  const api = useApi(pvcPrunerApiRef);
  const { cluster, namespace, owner } = filters;
  return useAsyncRetry(async (): Promise<FleetResponse | undefined> => {
    if (!enabled) return undefined;
    const request = { cluster, namespace, owner, limit: FLEET_PAGE_SIZE };
    const first = await api.getFleet(request);
    const items = [...first.items];
    for (let cursor = first.nextCursor; cursor; ) {
      const page = await api.getFleet({ ...request, cursor });
      items.push(...page.items);
      cursor = page.nextCursor;
    }
    const { nextCursor: _done, ...answer } = first;
    return { ...answer, items };
  }, [api, enabled, cluster, namespace, owner]);
}
