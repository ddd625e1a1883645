import { Entity } from '@backstage/catalog-model';
import {
  KUBERNETES_ANNOTATION,
  KUBERNETES_LABEL_SELECTOR_QUERY_ANNOTATION,
} from '@backstage/plugin-kubernetes-common';

/**
 * True when the entity says where its Kubernetes workloads are, so the
 * pvc-pruner card has StatefulSets to look at.
 *
 * @public
 */
export function isPvcPrunerAvailable(entity: Entity): boolean {
  const annotations = entity.metadata.annotations ?? {};
  return Boolean(
    annotations[KUBERNETES_ANNOTATION] ||
      annotations[KUBERNETES_LABEL_SELECTOR_QUERY_ANNOTATION],
  );
}
