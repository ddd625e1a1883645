import type { V1PersistentVolume } from '@kubernetes/client-node';
import { parseQuantity } from 'backstage-plugin-pvc-pruner-common';

/** Set by the provisioner that created a volume: whoever deletes its disk when the policy says Delete. */
export const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';

/** Why a statically provisioned volume is never offered. */
export const STATIC_VOLUME_REASON =
  'statically provisioned (no pv.kubernetes.io/provisioned-by annotation): no provisioner deletes its disk, and deleting the PersistentVolume object would leave the disk';

/** The longest name, uid or annotation value kept from a volume: a cluster's fields are hostile input. */
const MAX_FIELD = 253;

const capped = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 && value.length <= MAX_FIELD
    ? value
    : undefined;

/** A time the cluster sent (a Date once parsed by client-node, else a string), as ISO; undefined when it is none. */
function isoOf(value: unknown): string | undefined {
  const time =
    value instanceof Date || typeof value === 'string'
      ? new Date(value)
      : undefined;
  return time && !Number.isNaN(time.getTime()) ? time.toISOString() : undefined;
}

/** A Released volume's claim, as its claimRef names it. */
export interface ReleasedClaimRef {
  namespace: string;
  name: string;
  uid: string;
}

/** What a reclaim reads of a Released volume, every field capped. */
export interface ReleasedVolumeFacts {
  name: string;
  uid: string;
  resourceVersion: string;
  claim: ReleasedClaimRef;
  bytes: number;
  storageClass?: string;
  reclaimPolicy?: string;
  releasedSince?: string;
  /** The provisioner that created it; absent for a statically provisioned volume. */
  provisionedBy?: string;
}

/**
 * The volume's facts when it is Released to a claim its claimRef names by
 * namespace, name and uid; undefined otherwise (Bound, Available, Failed, a
 * claimRef without a uid, or a field no real cluster sends).
 */
export function releasedVolumeFacts(
  pv: V1PersistentVolume,
): ReleasedVolumeFacts | undefined {
  if (pv.status?.phase !== 'Released') return undefined;
  const ref = pv.spec?.claimRef;
  const name = capped(pv.metadata?.name);
  const uid = capped(pv.metadata?.uid);
  const resourceVersion = capped(pv.metadata?.resourceVersion);
  const claim = {
    namespace: capped(ref?.namespace),
    name: capped(ref?.name),
    uid: capped(ref?.uid),
  };
  if (!name || !uid || !resourceVersion) return undefined;
  if (!claim.namespace || !claim.name || !claim.uid) return undefined;
  const bytes = parseQuantity(pv.spec?.capacity?.storage) ?? 0;
  const releasedSince = isoOf(pv.status?.lastPhaseTransitionTime);
  return {
    name,
    uid,
    resourceVersion,
    claim: claim as ReleasedClaimRef,
    bytes: Number.isFinite(bytes) && bytes >= 0 ? bytes : 0,
    storageClass: capped(pv.spec?.storageClassName),
    reclaimPolicy: capped(pv.spec?.persistentVolumeReclaimPolicy),
    ...(releasedSince ? { releasedSince } : {}),
    provisionedBy: capped(pv.metadata?.annotations?.[PROVISIONED_BY]),
  };
}

/**
 * What the watch cache keeps of a volume for reclaims, beyond what the orphan
 * rule keeps: the claimRef, the provisioner annotation (only it, capped), the
 * size, the class and when it changed phase.
 */
export function withReclaimFields(
  trim: (pv: V1PersistentVolume) => V1PersistentVolume,
): (pv: V1PersistentVolume) => V1PersistentVolume {
  return pv => {
    const trimmed = trim(pv);
    const ref = pv.spec?.claimRef;
    const provisionedBy = capped(pv.metadata?.annotations?.[PROVISIONED_BY]);
    return {
      ...trimmed,
      metadata: {
        ...trimmed.metadata,
        uid: pv.metadata?.uid,
        ...(provisionedBy
          ? { annotations: { [PROVISIONED_BY]: provisionedBy } }
          : {}),
      },
      spec: {
        ...trimmed.spec,
        ...(ref
          ? {
              claimRef: {
                namespace: ref.namespace,
                name: ref.name,
                uid: ref.uid,
              },
            }
          : {}),
        capacity: pv.spec?.capacity?.storage
          ? { storage: pv.spec.capacity.storage }
          : undefined,
        storageClassName: pv.spec?.storageClassName,
      },
      status: pv.status && {
        phase: pv.status.phase,
        lastPhaseTransitionTime: pv.status.lastPhaseTransitionTime,
        message: capped(pv.status.message),
      },
    };
  };
}

/**
 * Why a Released volume must not be reclaimed now, judged live: undefined
 * when it is still Released to the claim uid the caller saw, that claim does
 * not exist, and a provisioner will delete its disk.
 */
export function whyNotReclaimable(
  pv: V1PersistentVolume | undefined,
  seen: { uid: string; claimUid: string },
  claimExists: boolean,
): string | undefined {
  if (!pv) return 'it no longer exists';
  if (pv.metadata?.uid !== seen.uid)
    return 'it was replaced by another volume of the same name';
  if (pv.metadata?.deletionTimestamp) return 'it is already being deleted';
  const facts = releasedVolumeFacts(pv);
  if (!facts)
    return `it is ${
      capped(pv.status?.phase) ?? 'in no phase'
    }, not Released to a claim`;
  if (facts.claim.uid !== seen.claimUid)
    return `it is now Released to another claim (uid ${facts.claim.uid}), not the one seen`;
  if (claimExists)
    return `its claim ${facts.claim.namespace}/${facts.claim.name} (uid ${facts.claim.uid}) exists`;
  if (!facts.provisionedBy) return STATIC_VOLUME_REASON;
  return undefined;
}
