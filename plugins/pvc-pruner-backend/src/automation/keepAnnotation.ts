import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import {
  ClaimKeep,
  KEEP_CLAIM_ANNOTATION,
} from 'backstage-plugin-pvc-pruner-common';

/** The claim's keep by its `pvc-pruner.backstage.io/keep` annotation (any value but `false`), if any. */
export function annotationKeep(
  claim: Pick<V1PersistentVolumeClaim, 'metadata'>,
): ClaimKeep | undefined {
  const value = claim.metadata?.annotations?.[KEEP_CLAIM_ANNOTATION];
  if (value === undefined || value.trim().toLowerCase() === 'false')
    return undefined;
  return {
    source: 'annotation',
    reason: `annotated ${KEEP_CLAIM_ANNOTATION}=${value.slice(0, 100)}`,
  };
}
