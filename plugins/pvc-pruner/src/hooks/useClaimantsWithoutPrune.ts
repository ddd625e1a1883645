import { useApi } from '@backstage/core-plugin-api';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  pvcPrunerPrunePermission,
  pvcPrunerUnownedPrunePermission,
} from 'backstage-plugin-pvc-pruner-common';
import useAsync from 'react-use/esm/useAsync';

/**
 * At most this many claimants are asked about per StatefulSet; beyond them
 * the backend, which checks every claimant, has the last word anyway.
 */
export const MAX_CLAIMANTS_CHECKED = 50;

/** What the user may not prune among a StatefulSet's other claimants. */
export interface ClaimantsWithoutPrune {
  loading: boolean;
  /** The claimants on which the user lacks `pvc-pruner.prune`. */
  refused: string[];
  /** The basic permissions of the StatefulSet's `pruneNeeds` the user lacks. */
  missing: string[];
}

const NONE: ClaimantsWithoutPrune = {
  loading: false,
  refused: [],
  missing: [],
};

/** The basic permissions a prune may need beyond the claimants' (`pruneNeeds`), by name. */
const BASIC = new Map([
  [pvcPrunerUnownedPrunePermission.name, pvcPrunerUnownedPrunePermission],
]);

/**
 * Asks, before the user types a StatefulSet's name, whether they hold
 * `pvc-pruner.prune` on the other entities that claim it: the backend refuses
 * the prune otherwise. The permission API sends the questions in one batch.
 * A failed check refuses nothing here: the backend decides.
 */
export function useClaimantsWithoutPrune(
  claimants: string[] | undefined,
  pruneNeeds: string[] = [],
): ClaimantsWithoutPrune {
  const permissionApi = useApi(permissionApiRef);
  const asked = (claimants ?? []).slice(0, MAX_CLAIMANTS_CHECKED);
  const key = asked.join(' ');
  const needs = pruneNeeds.filter(name => BASIC.has(name)).join(' ');
  const state = useAsync(async () => {
    const refs = key ? key.split(' ') : [];
    const basic = needs ? needs.split(' ') : [];
    const answers = await Promise.all([
      ...refs.map(resourceRef =>
        permissionApi.authorize({
          permission: pvcPrunerPrunePermission,
          resourceRef,
        }),
      ),
      ...basic.map(name =>
        permissionApi.authorize({ permission: BASIC.get(name)! }),
      ),
    ]);
    const denied = answers.map(a => a.result !== AuthorizeResult.ALLOW);
    return {
      refused: refs.filter((_, i) => denied[i]),
      missing: basic.filter((_, i) => denied[refs.length + i]),
    };
  }, [permissionApi, key, needs]);
  if ((!key && !needs) || state.error) return NONE;
  return {
    loading: state.loading,
    refused: state.value?.refused ?? [],
    missing: state.value?.missing ?? [],
  };
}
