import {
  Entity,
  parseEntityRef,
  stringifyEntityRef,
} from '@backstage/catalog-model';
import { KUBERNETES_ANNOTATION } from '@backstage/plugin-kubernetes-common';
import { EntityWorkloadTarget, workloadTargetOf } from '../orphans';

/** An entity with where its workloads live, and who owns it. */
export interface WorkloadEntity extends EntityWorkloadTarget {
  /** The owner's entity ref, resolved as the catalog resolves `spec.owner`. */
  owner?: string;
}

/** `spec.owner` as an entity ref (kind group and the entity's namespace by default), or undefined. */
export function ownerOf(entity: Entity): string | undefined {
  const owner = entity.spec?.owner;
  if (typeof owner !== 'string' || !owner) return undefined;
  try {
    return stringifyEntityRef(
      parseEntityRef(owner, {
        defaultKind: 'group',
        defaultNamespace: entity.metadata.namespace ?? 'default',
      }),
    );
  } catch {
    return undefined;
  }
}

/** The entity's workloads and owner, or undefined when its annotations are empty. */
export function workloadEntityOf(entity: Entity): WorkloadEntity | undefined {
  let target: EntityWorkloadTarget;
  try {
    target = workloadTargetOf(entity);
  } catch {
    return undefined;
  }
  return { ...target, owner: ownerOf(entity) };
}

const PLAIN_KUBERNETES_ID = new RegExp(
  `^\\s*${KUBERNETES_ANNOTATION.replace(
    /[.]/g,
    '\\.',
  )}\\s*==?\\s*[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\\s*$`,
);

/**
 * Whether the entity selects its workloads by the plain
 * `backstage.io/kubernetes-id` label alone (the `kubernetes-id` annotation,
 * or a label selector of exactly that one requirement): the label Backstage
 * asks workloads to carry, which a broad selector does not prove.
 */
export function selectsByKubernetesId(target: EntityWorkloadTarget): boolean {
  return PLAIN_KUBERNETES_ID.test(target.labelSelector);
}
