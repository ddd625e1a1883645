import { KubeObject, OwnerReference } from '../types';
import { ownerRefTo } from './util';

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
export const REVISION_LABEL = 'controller-revision-hash';

const STATEFUL_POD = /^(.*)-([0-9]+)$/;

/** Parent set name and ordinal from a pod name, as getParentNameAndOrdinal does. */
export function parentAndOrdinal(
  name: string,
): { parent: string; ordinal: number } | undefined {
  const m = name.match(STATEFUL_POD);
  if (!m) return undefined;
  const ordinal = Number(m[2]);
  return { parent: m[1], ordinal: ordinal <= 2 ** 31 - 1 ? ordinal : -1 };
}

export function ordinalOf(pod: KubeObject) {
  return parentAndOrdinal(pod.metadata.name)?.ordinal ?? -1;
}

export function startOrdinal(set: KubeObject): number {
  return set.spec.ordinals?.start ?? 0;
}

export function inOrdinalRange(ordinal: number, set: KubeObject) {
  const start = startOrdinal(set);
  return ordinal >= start && ordinal < start + set.spec.replicas;
}

export function podName(set: KubeObject, ordinal: number) {
  return `${set.metadata.name}-${ordinal}`;
}

export function claimName(
  set: KubeObject,
  template: KubeObject,
  ordinal: number,
) {
  return `${template.metadata.name}-${set.metadata.name}-${ordinal}`;
}

/** The claims a member needs, keyed by template name (getPersistentVolumeClaims). */
export function claimsFor(
  set: KubeObject,
  ordinal: number,
): Array<{ template: string; claim: KubeObject }> {
  const matchLabels = set.spec.selector?.matchLabels;
  return (set.spec.volumeClaimTemplates ?? []).map((template: KubeObject) => {
    const claim: KubeObject = structuredClone(template);
    const labels = template.metadata.labels
      ? { ...template.metadata.labels, ...matchLabels }
      : matchLabels && { ...matchLabels };
    claim.apiVersion = 'v1';
    claim.kind = 'PersistentVolumeClaim';
    claim.metadata = {
      ...claim.metadata,
      name: claimName(set, template, ordinal),
      namespace: set.metadata.namespace,
    };
    if (labels) claim.metadata.labels = labels;
    else delete claim.metadata.labels;
    return { template: template.metadata.name, claim };
  });
}

/** Claim volumes first, then the template's other volumes (updateStorage). */
export function storageVolumes(
  set: KubeObject,
  ordinal: number,
  current: any[] = [],
) {
  const claims = claimsFor(set, ordinal);
  const names = new Set(claims.map(c => c.template));
  return [
    ...claims.map(c => ({
      name: c.template,
      persistentVolumeClaim: { claimName: c.claim.metadata.name },
    })),
    ...current.filter(v => !names.has(v?.name)),
  ];
}

export function identityMatches(set: KubeObject, pod: KubeObject) {
  const parsed = parentAndOrdinal(pod.metadata.name);
  return (
    !!parsed &&
    parsed.ordinal >= 0 &&
    parsed.parent === set.metadata.name &&
    pod.metadata.namespace === set.metadata.namespace &&
    pod.metadata.labels?.[POD_NAME_LABEL] === pod.metadata.name
  );
}

export function storageMatches(set: KubeObject, pod: KubeObject) {
  const ordinal = ordinalOf(pod);
  if (ordinal < 0) return false;
  const volumes = new Map<string, any>(
    (pod.spec?.volumes ?? []).map((v: any) => [v.name, v]),
  );
  return claimsFor(set, ordinal).every(
    c =>
      volumes.get(c.template)?.persistentVolumeClaim?.claimName ===
      c.claim.metadata.name,
  );
}

/** A member pod built from a template (newStatefulSetPod + setPodRevision). */
export function newPod(
  set: KubeObject,
  template: any,
  ordinal: number,
  revision: string,
): KubeObject {
  const name = podName(set, ordinal);
  const meta = template.metadata ?? {};
  const spec = structuredClone(template.spec);
  spec.hostname = name;
  if (set.spec.serviceName) spec.subdomain = set.spec.serviceName;
  spec.volumes = storageVolumes(set, ordinal, spec.volumes);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: `${set.metadata.name}-`,
      namespace: set.metadata.namespace,
      labels: {
        ...meta.labels,
        [POD_NAME_LABEL]: name,
        [POD_INDEX_LABEL]: String(ordinal),
        [REVISION_LABEL]: revision,
      },
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
      ...(meta.finalizers ? { finalizers: [...meta.finalizers] } : {}),
      ownerReferences: [ownerRefTo(set, true)],
    } as KubeObject['metadata'],
    spec,
  };
}

const SAFE_ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** JSON with sorted keys: the same template hashes the same however a client ordered it. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries
      .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * ControllerRevision name for a template: like the real controller, an
 * FNV-32a hash (plus collision count) rendered with rand.SafeEncodeString.
 */
export function revisionName(set: KubeObject, collisionCount = 0) {
  let hash = 0x811c9dc5;
  const text =
    canonicalJson(set.spec.template) +
    (collisionCount ? String(collisionCount) : '');
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  const encoded = [...String(hash)]
    .map(c => SAFE_ALPHANUMS[c.charCodeAt(0) % SAFE_ALPHANUMS.length])
    .join('');
  return `${set.metadata.name}-${encoded}`;
}

// PVC retention (KEP-1847), as in stateful_set_utils.go.

export function retentionPolicy(set: KubeObject): {
  whenDeleted: string;
  whenScaled: string;
} {
  const policy = set.spec.persistentVolumeClaimRetentionPolicy ?? {};
  return {
    whenDeleted: policy.whenDeleted ?? 'Retain',
    whenScaled: policy.whenScaled ?? 'Retain',
  };
}

function matchesRef(
  ref: OwnerReference,
  obj: KubeObject,
  apiVersion: string,
  kind: string,
) {
  return (
    ref.apiVersion === apiVersion &&
    ref.kind === kind &&
    ref.name === obj.metadata.name
  );
}

const isSetRef = (ref: OwnerReference, set: KubeObject) =>
  matchesRef(ref, set, 'apps/v1', 'StatefulSet');
const isPodRef = (ref: OwnerReference, pod: KubeObject) =>
  matchesRef(ref, pod, 'v1', 'Pod');
const refs = (claim: KubeObject) => claim.metadata.ownerReferences ?? [];
const hasOwnerRef = (claim: KubeObject, owner: KubeObject) =>
  refs(claim).some(r => r.uid === owner.metadata.uid);

/** A ref that names the pod but not its uid: the claim of a pod that was replaced (or is yet to be created). */
export function hasStalePodRef(
  claim: KubeObject,
  pod: { metadata: { name: string; uid?: string } },
) {
  const ref = refs(claim).find(
    r =>
      r.apiVersion === 'v1' && r.kind === 'Pod' && r.name === pod.metadata.name,
  );
  return ref !== undefined && ref.uid !== pod.metadata.uid;
}

function hasStaleSetRef(claim: KubeObject, set: KubeObject) {
  const ref = refs(claim).find(r => isSetRef(r, set));
  return ref !== undefined && ref.uid !== set.metadata.uid;
}

function hasUnexpectedController(
  claim: KubeObject,
  set: KubeObject,
  pod: KubeObject,
) {
  const policy = retentionPolicy(set);
  if (policy.whenScaled === 'Retain' && policy.whenDeleted === 'Retain')
    return false;
  return refs(claim).some(ref => {
    if (isSetRef(ref, set)) return ref.uid !== set.metadata.uid;
    if (isPodRef(ref, pod)) return ref.uid !== pod.metadata.uid;
    return ref.controller === true;
  });
}

function hasNonControllerOwner(
  claim: KubeObject,
  set: KubeObject,
  pod: KubeObject,
) {
  return refs(claim).some(
    r =>
      (r.uid === set.metadata.uid || r.uid === pod.metadata.uid) &&
      !r.controller,
  );
}

/** isClaimOwnerUpToDate: whether the claim's refs already follow the retention policy. */
export function claimOwnerUpToDate(
  claim: KubeObject,
  set: KubeObject,
  pod: KubeObject,
): boolean {
  if (hasStaleSetRef(claim, set) || hasStalePodRef(claim, pod)) return true;
  if (hasUnexpectedController(claim, set, pod))
    return !(hasOwnerRef(claim, set) || hasOwnerRef(claim, pod));
  if (hasNonControllerOwner(claim, set, pod)) return false;
  const { whenScaled, whenDeleted } = retentionPolicy(set);
  const scaledDown = !inOrdinalRange(ordinalOf(pod), set);
  const wantSet =
    whenDeleted === 'Delete' && !(whenScaled === 'Delete' && scaledDown);
  const wantPod = whenScaled === 'Delete' && scaledDown;
  return (
    hasOwnerRef(claim, set) === wantSet && hasOwnerRef(claim, pod) === wantPod
  );
}

/** updateClaimOwnerRefForSetAndPod: the claim's refs rewritten for the policy (controller refs, as upstream). */
export function claimOwnerRefs(
  claim: KubeObject,
  set: KubeObject,
  pod: KubeObject,
): OwnerReference[] {
  const unexpected = hasUnexpectedController(claim, set, pod);
  const kept = refs(claim).filter(r => !isSetRef(r, set) && !isPodRef(r, pod));
  if (unexpected) return kept;
  const { whenScaled, whenDeleted } = retentionPolicy(set);
  const scaledDown = !inOrdinalRange(ordinalOf(pod), set);
  if (whenScaled === 'Delete' && scaledDown)
    return [...kept, ownerRefTo(pod, true)];
  if (whenDeleted === 'Delete') return [...kept, ownerRefTo(set, true)];
  return kept;
}
