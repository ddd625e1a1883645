import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import { NotAllowedError } from '@backstage/errors';
import type { KubeGateway } from '../kubernetes';
import { WorkloadEntity } from './WorkloadEntity';

/** Entries read from the annotation; a namespace names a handful of owners. */
const MAX_NAMED = 100;

/** The entity refs an owner annotation names, comma- or space-separated (kind group and namespace default unless given). */
export function namedOwners(value: string | undefined): Set<string> {
  const named = new Set<string>();
  for (const part of (value ?? '').split(/[\s,]+/).slice(0, MAX_NAMED)) {
    if (!part) continue;
    try {
      named.add(
        stringifyEntityRef(
          parseEntityRef(part, {
            defaultKind: 'group',
            defaultNamespace: 'default',
          }),
        ),
      );
    } catch {
      // Not an entity ref: it names nobody.
    }
  }
  return named;
}

/**
 * The optional binding from the cluster's side
 * (`pvcPruner.ownership.namespaceOwnerAnnotation`): a prune also needs the
 * StatefulSet's Namespace to name, in that annotation, the owner of every
 * entity that claims it (or the entity itself). Namespaces are written under
 * the platform's RBAC, not by whoever writes catalog YAML.
 */
export class NamespaceOwners {
  constructor(private readonly annotation?: string) {}

  get enabled(): boolean {
    return Boolean(this.annotation);
  }

  /** Throws NotAllowedError naming the first claimant the namespace does not name. */
  async check(
    gateway: KubeGateway,
    namespace: string,
    claimants: WorkloadEntity[],
  ): Promise<void> {
    const annotation = this.annotation;
    if (!annotation || claimants.length === 0) return;
    const ns = await gateway.readNamespace(namespace);
    const value = ns.metadata?.annotations?.[annotation];
    const named = namedOwners(value);
    for (const claimant of claimants) {
      if (named.has(claimant.entityRef)) continue;
      if (claimant.owner && named.has(claimant.owner)) continue;
      const shown =
        value && value.length > 200 ? `${value.slice(0, 200)}…` : value;
      throw new NotAllowedError(
        `Namespace ${namespace} ${
          shown ? `names ${shown}` : 'names no owner'
        } in its ${annotation} annotation, not ${
          claimant.entityRef
        } or its owner (${
          claimant.owner ?? 'none'
        }): pvcPruner.ownership.namespaceOwnerAnnotation is set, so a prune needs the namespace to name the owner of every entity that claims the StatefulSet`,
      );
    }
  }
}
