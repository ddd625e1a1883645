import { KEEP_CLAIM_ANNOTATION } from 'backstage-plugin-pvc-pruner-common';
import { KubeSim, pvc } from 'kube-sim';
import type { AutoPruneOptions } from '../automation';

const CLAIMS = 'persistentvolumeclaims';

/** Unused claims in shop, without finalizers (their delete is final): what a job confirmed. */
export function createUnusedClaims(sim: KubeSim, names: string[]) {
  return names.map(name => {
    const created = sim.store.create(CLAIMS, pvc(name, {}, 'shop'));
    const claim = sim.store.update(CLAIMS, {
      ...created,
      metadata: { ...created.metadata, finalizers: [] },
    });
    return { name, uid: claim.metadata.uid as string };
  });
}

/** Removes every claim of shop, Terminating ones included. */
export function removeShopClaims(sim: KubeSim) {
  for (const claim of sim.store.list(CLAIMS).items) {
    const name = claim.metadata.name;
    if (!claim.metadata.deletionTimestamp)
      sim.store.delete(CLAIMS, 'shop', name, {});
    const left = sim.store.get(CLAIMS, 'shop', name);
    if (left)
      sim.store.update(CLAIMS, {
        ...left,
        metadata: { ...left.metadata, finalizers: [] },
      });
  }
}

/** Annotates a claim of shop as kept, as `kubectl annotate pvc` does. */
export function annotateKept(sim: KubeSim, name: string, value = 'true') {
  const claim = sim.store.require(CLAIMS, 'shop', name);
  sim.store.update(CLAIMS, {
    ...claim,
    metadata: {
      ...claim.metadata,
      annotations: {
        ...claim.metadata.annotations,
        [KEEP_CLAIM_ANNOTATION]: value,
      },
    },
  });
}

export const claimExists = (sim: KubeSim, name: string) =>
  Boolean(sim.store.get(CLAIMS, 'shop', name));

/** `pvcPruner.autoPrune` enabled everywhere, with its defaults but a 1d minimum grace. */
export const AUTO_PRUNE_ENABLED: AutoPruneOptions = {
  enabled: true,
  schedule: { frequency: { hours: 1 }, timeout: { minutes: 30 } },
  minimumGraceMs: 86_400_000,
  maxClaimsPerRun: 50,
  maxBytesPerRun: 1024 ** 4,
  notifyBeforeMs: 2 * 86_400_000,
  requireNotifications: false,
};
