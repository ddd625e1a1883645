import { Entity } from '@backstage/catalog-model';

/** The annotation naming the entity's Kubernetes id (label `backstage.io/kubernetes-id`). */
export const KUBERNETES_ID_ANNOTATION = 'backstage.io/kubernetes-id';
/** The annotation holding a label selector for the entity's workloads. */
export const KUBERNETES_LABEL_SELECTOR_ANNOTATION =
  'backstage.io/kubernetes-label-selector';

/**
 * True when the entity says where its Kubernetes workloads are, so the
 * pvc-pruner card has StatefulSets to look at.
 *
 * @public
 */
export function isPvcPrunerAvailable(entity: Entity): boolean {
  const annotations = entity.metadata.annotations ?? {};
  return Boolean(
    annotations[KUBERNETES_ID_ANNOTATION] ||
      annotations[KUBERNETES_LABEL_SELECTOR_ANNOTATION],
  );
}
