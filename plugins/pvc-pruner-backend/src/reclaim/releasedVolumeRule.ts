import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
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
  /** `spec.csi.driver`: which CSI driver manages the disk; absent for another source. */
  csiDriver?: string;
}

/** What a reclaim reads live beside the volume: the claim at its claimRef's name, and (for a volume without a CSI source) its StorageClass's provisioner. */
export interface ReclaimContext {
  claim?: V1PersistentVolumeClaim;
  classProvisioner?: string;
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
    csiDriver: capped(pv.spec?.csi?.driver),
  };
}

/**
 * Why the volume's disk is not one its annotated provisioner deletes:
 * undefined when its source agrees with `pv.kubernetes.io/provisioned-by`
 * (a CSI source of that driver, or another source whose StorageClass names
 * that provisioner). The annotation is metadata that a backup restore or a
 * cluster migration copies onto volumes imported by hand; the source is
 * what a Delete policy hands to a provisioner.
 */
export function unmanagedReason(
  facts: ReleasedVolumeFacts,
  classProvisioner?: string,
): string | undefined {
  const { provisionedBy, csiDriver, storageClass } = facts;
  if (!provisionedBy) return STATIC_VOLUME_REASON;
  if (csiDriver)
    return csiDriver === provisionedBy
      ? undefined
      : `its CSI driver ${csiDriver} is not ${provisionedBy}, the provisioner its ${PROVISIONED_BY} annotation names (copied by a restore or a migration?): no provisioner may delete its disk, and deleting the PersistentVolume object would leave the disk`;
  if (classProvisioner === provisionedBy) return undefined;
  return `its ${PROVISIONED_BY} annotation names ${provisionedBy}, but it has no CSI source and its StorageClass ${
    storageClass ?? '(none)'
  } ${
    classProvisioner
      ? `names provisioner ${classProvisioner}`
      : 'does not exist or could not be read'
  }: no provisioner may delete its disk, and deleting the PersistentVolume object would leave the disk`;
}

/** Why the claim now at the volume's claimRef name blocks a reclaim: it is the claim, or a claim re-created to recover the volume. */
export function claimBlocks(
  facts: ReleasedVolumeFacts,
  claim: V1PersistentVolumeClaim | undefined,
): string | undefined {
  if (!claim) return undefined;
  const where = `${facts.claim.namespace}/${facts.claim.name}`;
  if (claim.metadata?.uid === facts.claim.uid)
    return `its claim ${where} (uid ${facts.claim.uid}) exists`;
  if (claim.spec?.volumeName === facts.name)
    return `a claim ${where} was created again to bind it (its spec.volumeName names ${facts.name}): the volume is being recovered`;
  if (claim.status?.phase === 'Pending')
    return `a claim ${where} is Pending, and may be waiting to bind this volume (a recovery): it is not reclaimed while that claim is Pending`;
  return undefined;
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
        ...(pv.spec?.csi?.driver
          ? { csi: { driver: pv.spec.csi.driver, volumeHandle: '' } }
          : {}),
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
 * when it is still Released to the claim uid the caller saw, no claim at its
 * claimRef's name is that claim or one re-created to recover it, and its
 * source shows a provisioner will delete its disk.
 */
export function whyNotReclaimable(
  pv: V1PersistentVolume | undefined,
  seen: { uid: string; claimUid: string },
  live: ReclaimContext,
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
  return (
    claimBlocks(facts, live.claim) ??
    unmanagedReason(facts, live.classProvisioner)
  );
}
