import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import {
  ClaimKeep,
  KEEP_CLAIM_ANNOTATION,
} from 'backstage-plugin-pvc-pruner-common';

/** The longest keep annotation value a trimmed claim carries; what the keep's reason shows of it. */
const MAX_KEEP_VALUE = 100;

/** The claim's keep by its `pvc-pruner.backstage.io/keep` annotation (any value but `false`), if any. */
export function annotationKeep(
  claim: Pick<V1PersistentVolumeClaim, 'metadata'>,
): ClaimKeep | undefined {
  const value = claim.metadata?.annotations?.[KEEP_CLAIM_ANNOTATION];
  if (value === undefined || value.trim().toLowerCase() === 'false')
    return undefined;
  return {
    source: 'annotation',
    reason: `annotated ${KEEP_CLAIM_ANNOTATION}=${value.slice(
      0,
      MAX_KEEP_VALUE,
    )}`,
  };
}

/**
 * The claim's annotations as a trimmed claim keeps them (a watch cache's,
 * or a live list's): only the keep annotation, its value capped, or none.
 */
export function keepAnnotationOf(
  claim: Pick<V1PersistentVolumeClaim, 'metadata'>,
): Record<string, string> | undefined {
  const value = claim.metadata?.annotations?.[KEEP_CLAIM_ANNOTATION];
  return typeof value === 'string'
    ? { [KEEP_CLAIM_ANNOTATION]: value.slice(0, MAX_KEEP_VALUE) }
    : undefined;
}
