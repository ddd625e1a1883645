import { BackstageCredentials } from '@backstage/backend-plugin-api';
import {
  Entity,
  parseEntityRef,
  stringifyEntityRef,
} from '@backstage/catalog-model';
import { InputError, NotFoundError } from '@backstage/errors';
import { CatalogService } from '@backstage/plugin-catalog-node';
import {
  KUBERNETES_ANNOTATION,
  KUBERNETES_LABEL_SELECTOR_QUERY_ANNOTATION,
} from '@backstage/plugin-kubernetes-common';

// The Kubernetes plugin reads these two too, but @backstage/plugin-kubernetes-common exports no constant for them.
const KUBERNETES_NAMESPACE_ANNOTATION = 'backstage.io/kubernetes-namespace';
const KUBERNETES_CLUSTER_ANNOTATION = 'backstage.io/kubernetes-cluster';

/** Where an entity's workloads live, read from its annotations as Backstage's Kubernetes plugin reads them. */
export interface EntityWorkloadTarget {
  entity: Entity;
  entityRef: string;
  labelSelector: string;
  /** Only this namespace, when the entity names one. */
  namespace?: string;
  /** Only this cluster, when the entity names one. */
  cluster?: string;
}

/** The target of an entity, or an InputError naming the annotations it lacks. */
export function workloadTargetOf(entity: Entity): EntityWorkloadTarget {
  const annotations = entity.metadata.annotations ?? {};
  const id = annotations[KUBERNETES_ANNOTATION];
  const selector = annotations[KUBERNETES_LABEL_SELECTOR_QUERY_ANNOTATION];
  const entityRef = stringifyEntityRef(entity);
  if (!selector && !id) {
    throw new InputError(
      `Entity ${entityRef} has no Kubernetes annotations: add "${KUBERNETES_ANNOTATION}" or "${KUBERNETES_LABEL_SELECTOR_QUERY_ANNOTATION}" to find its StatefulSets`,
    );
  }
  return {
    entity,
    entityRef,
    labelSelector: selector || `${KUBERNETES_ANNOTATION}=${id}`,
    namespace: annotations[KUBERNETES_NAMESPACE_ANNOTATION] || undefined,
    cluster: annotations[KUBERNETES_CLUSTER_ANNOTATION] || undefined,
  };
}

/** Parses an entity ref strictly; malformed refs are the caller's mistake (400). */
export function parseEntityRefStrict(ref: string): string {
  try {
    return stringifyEntityRef(parseEntityRef(ref));
  } catch (e) {
    throw new InputError(
      `Malformed entityRef "${ref}": ${(e as Error).message}`,
    );
  }
}

/** Resolves a catalog entity, fetched with the caller's credentials, to where its StatefulSets live. */
export class EntityWorkloads {
  constructor(private readonly catalog: CatalogService) {}

  async resolve(
    entityRef: string,
    credentials: BackstageCredentials,
  ): Promise<EntityWorkloadTarget> {
    const ref = parseEntityRefStrict(entityRef);
    const entity = await this.catalog.getEntityByRef(ref, { credentials });
    if (!entity)
      throw new NotFoundError(`Entity ${ref} was not found in the catalog`);
    return workloadTargetOf(entity);
  }
}
