/**
 * Who claims a StatefulSet, and who may prune it, as the oracle judges it:
 * from the catalog as the campaign wrote it (and read it back from the
 * replicas), the StatefulSet's labels as the simulator had them, and the
 * demo's permission policy. Written apart from the plugin's own code (its
 * labels are matched by the simulator's selector parser, as kube-apiserver
 * reads a labelSelector), so that a mistake there is not repeated here.
 */
import { labelMatcher } from 'kube-sim';

export const KUBERNETES_ID = 'backstage.io/kubernetes-id';
export const LABEL_SELECTOR = 'backstage.io/kubernetes-label-selector';
export const NAMESPACE_ANNOTATION = 'backstage.io/kubernetes-namespace';
export const CLUSTER_ANNOTATION = 'backstage.io/kubernetes-cluster';

/** A catalog entity with Kubernetes annotations, and when the catalog had it. */
export interface CatalogEntity {
  /** e.g. component:default/orders */
  ref: string;
  /** `spec.owner` as an entity ref. */
  owner?: string;
  annotations: Record<string, string>;
  /** When every replica's catalog served it (0: before the campaign began). */
  visibleAt: number;
  /** When the campaign wrote it to its catalog file: a replica may serve it from then on. */
  writtenAt?: number;
  /** When the campaign began to remove it. */
  removedAt?: number;
}

/** `spec.owner` as an entity ref: kind group and the entity's namespace unless it says. */
export function ownerRef(owner: string, namespace = 'default'): string {
  const colon = owner.indexOf(':');
  const kind = colon >= 0 ? owner.slice(0, colon) : 'group';
  const rest = colon >= 0 ? owner.slice(colon + 1) : owner;
  const slash = rest.indexOf('/');
  const ns = slash >= 0 ? rest.slice(0, slash) : namespace;
  const name = slash >= 0 ? rest.slice(slash + 1) : rest;
  return `${kind.toLowerCase()}:${ns.toLowerCase()}/${name}`;
}

/**
 * Where Backstage's Kubernetes plugin looks for an entity's workloads: its
 * label selector (the annotation, else `kubernetes-id=<id>`), namespace and
 * cluster; none without either annotation.
 */
function targetOf(entity: CatalogEntity) {
  const a = entity.annotations;
  const selector =
    a[LABEL_SELECTOR] ||
    (a[KUBERNETES_ID] ? `${KUBERNETES_ID}=${a[KUBERNETES_ID]}` : '');
  if (!selector) return undefined;
  return {
    selector,
    namespace: a[NAMESPACE_ANNOTATION] || undefined,
    cluster: a[CLUSTER_ANNOTATION] || undefined,
  };
}

/**
 * Whether the entity claims a StatefulSet with these labels in this
 * namespace and cluster. A selector that cannot be read claims everything
 * in its scope: a prune must not take an unreadable claim as no claim.
 */
export function claims(
  entity: CatalogEntity,
  statefulSet: { namespace: string; labels: Record<string, string> },
  cluster: string,
): boolean {
  const target = targetOf(entity);
  if (!target) return false;
  if (target.namespace && target.namespace !== statefulSet.namespace)
    return false;
  if (target.cluster && target.cluster !== cluster) return false;
  try {
    return labelMatcher(target.selector)(statefulSet.labels);
  } catch {
    return true;
  }
}

/** Whether it selects by the plain `backstage.io/kubernetes-id=<value>` label alone. */
export function selectsByKubernetesId(entity: CatalogEntity): boolean {
  const target = targetOf(entity);
  return Boolean(
    target &&
      new RegExp(
        `^\\s*backstage\\.io/kubernetes-id\\s*==?\\s*[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\\s*$`,
      ).test(target.selector),
  );
}

/** What the permission policy lets the campaign's user do, as the oracle applies it. */
export interface PolicyModel {
  /** `pvc-pruner.prune` on this entity. */
  mayPrune(entity: CatalogEntity): boolean;
  /** The basic `pvc-pruner.unowned.prune`. */
  unownedPrune: boolean;
}

/**
 * The demo's policy (plugins/pvc-pruner-backend/dev/index.ts): prune only
 * what one owns (the catalog's isEntityOwner against the user's ownership
 * refs); everything not named there, `pvc-pruner.unowned.prune` included,
 * is allowed.
 */
export function demoPolicy(ownershipRefs: readonly string[]): PolicyModel {
  return {
    mayPrune: entity =>
      entity.owner !== undefined && ownershipRefs.includes(entity.owner),
    unownedPrune: true,
  };
}

/**
 * What keeps a prune of a StatefulSet (with these labels) from being
 * allowed: the claimants (and the entity it went through) the user may not
 * prune, and whether it needs `pvc-pruner.unowned.prune`, which the user
 * lacks. Empty when the prune is allowed.
 */
export function pruneRefusals(options: {
  catalog: readonly CatalogEntity[];
  statefulSet: { namespace: string; labels: Record<string, string> };
  cluster: string;
  via?: string;
  policy: PolicyModel;
}): string[] {
  const { catalog, statefulSet, cluster, via, policy } = options;
  const claimants = catalog.filter(e => claims(e, statefulSet, cluster));
  const through = catalog.find(e => e.ref === via);
  const asked =
    through && !claimants.includes(through)
      ? [...claimants, through]
      : claimants;
  const refusals = asked
    .filter(e => !policy.mayPrune(e))
    .map(e => `${e.ref} (owned by ${e.owner ?? 'nobody'})`);
  if (!policy.unownedPrune && !claimants.some(selectsByKubernetesId))
    refusals.push(
      `pvc-pruner.unowned.prune (no claimant selects it by the plain ${KUBERNETES_ID} label)`,
    );
  return refusals;
}
