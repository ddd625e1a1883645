import { createHash } from 'node:crypto';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { VolumeSnapshot } from '../kubernetes/volumeSnapshotTypes';

/** Labels and annotations of the snapshots pvc-pruner takes, by which they are found again and restored. */
const PREFIX = 'pvc-pruner.backstage.io';

export const SNAPSHOT_LABELS = {
  managedBy: 'app.kubernetes.io/managed-by',
  job: `${PREFIX}/job`,
  claimUid: `${PREFIX}/claim-uid`,
  statefulSet: `${PREFIX}/statefulset`,
  /** A hash of the entity ref (refs are not label values); the ref itself is an annotation. */
  entity: `${PREFIX}/entity`,
} as const;

export const SNAPSHOT_ANNOTATIONS = {
  claimName: `${PREFIX}/claim-name`,
  claimLabels: `${PREFIX}/claim-labels`,
  storageClass: `${PREFIX}/storage-class`,
  accessModes: `${PREFIX}/access-modes`,
  volumeMode: `${PREFIX}/volume-mode`,
  requestedSize: `${PREFIX}/requested-size`,
  entityRef: `${PREFIX}/entity-ref`,
  requestedBy: `${PREFIX}/requested-by`,
  expiresAt: `${PREFIX}/expires-at`,
  /** Set by `POST /v1/snapshots/keep` (or by hand): keep the snapshot at least until this ISO 8601 date. */
  keepUntil: `${PREFIX}/keep-until`,
  /** Set by a restore before it creates the claim: the change makes an expiry that listed the snapshot earlier fail its delete. */
  restoredAt: `${PREFIX}/restored-at`,
  /** What tells pvc-pruner's snapshots from any labelled as its own (see SnapshotSeal). */
  seal: `${PREFIX}/seal`,
} as const;

export const MANAGED_BY = 'pvc-pruner';

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * `text` as a label value: itself when it is one (at most 63 characters of
 * the allowed ones), else `sha256-` and 56 hex digits of its hash, so the
 * same text always selects the same snapshots.
 */
export function labelValue(text: string): string {
  if (text.length <= 63 && LABEL_VALUE.test(text)) return text;
  return `sha256-${createHash('sha256')
    .update(text)
    .digest('hex')
    .slice(0, 56)}`;
}

/**
 * The snapshot's name: the claim's, then the job's first 8 characters, within
 * the 253 of a name and ending as names must, so one job's snapshot of a
 * claim has one name and another job's another.
 */
export function snapshotName(claimName: string, jobId: string): string {
  const suffix = `-${jobId.replace(/[^a-z0-9]/g, '').slice(0, 8) || 'job'}`;
  if (claimName.length + suffix.length <= 253) return `${claimName}${suffix}`;
  // Cut, a long name keeps a hash of all of it: two long claims of one job never share a snapshot name.
  const hash = `-${createHash('sha256')
    .update(claimName)
    .digest('hex')
    .slice(0, 10)}`;
  const stem = claimName
    .slice(0, 253 - suffix.length - hash.length)
    .replace(/[-.]+$/, '');
  return `${stem}${hash}${suffix}`;
}

/** The most of a claim's labels a snapshot keeps as JSON, within the API server's 256 KiB for all annotations. */
export const CLAIM_LABELS_MAX_BYTES = 16 * 1024;

/** The claim's labels as JSON; past the cap, a note saying they were too many to keep. */
function claimLabels(labels: Record<string, string> | undefined): string {
  const json = JSON.stringify(labels ?? {});
  if (Buffer.byteLength(json) <= CLAIM_LABELS_MAX_BYTES) return json;
  return JSON.stringify({
    'pvc-pruner.backstage.io/labels-not-kept': `the claim's labels took ${Buffer.byteLength(
      json,
    )} bytes as JSON, more than the ${CLAIM_LABELS_MAX_BYTES} a snapshot keeps; set them by hand on a restored claim`,
  });
}

/** What the job's snapshot of a claim says about where it came from, for a restore. */
export function snapshotMetadata(options: {
  claim: V1PersistentVolumeClaim;
  jobId: string;
  statefulSet: string;
  entityRef?: string;
  requestedBy: string;
  expiresAt: Date;
}) {
  const { claim, jobId, statefulSet, entityRef, requestedBy } = options;
  const spec = claim.spec ?? {};
  const annotations: Record<string, string> = {
    [SNAPSHOT_ANNOTATIONS.claimName]: claim.metadata?.name ?? '',
    [SNAPSHOT_ANNOTATIONS.claimLabels]: claimLabels(claim.metadata?.labels),
    [SNAPSHOT_ANNOTATIONS.accessModes]: JSON.stringify(spec.accessModes ?? []),
    [SNAPSHOT_ANNOTATIONS.requestedBy]: requestedBy,
    [SNAPSHOT_ANNOTATIONS.expiresAt]: options.expiresAt.toISOString(),
  };
  if (spec.storageClassName)
    annotations[SNAPSHOT_ANNOTATIONS.storageClass] = spec.storageClassName;
  if (spec.volumeMode)
    annotations[SNAPSHOT_ANNOTATIONS.volumeMode] = spec.volumeMode;
  const requested = spec.resources?.requests?.storage;
  if (requested !== undefined)
    annotations[SNAPSHOT_ANNOTATIONS.requestedSize] = String(requested);
  if (entityRef) annotations[SNAPSHOT_ANNOTATIONS.entityRef] = entityRef;
  const labels: Record<string, string> = {
    [SNAPSHOT_LABELS.managedBy]: MANAGED_BY,
    [SNAPSHOT_LABELS.job]: labelValue(jobId),
    [SNAPSHOT_LABELS.claimUid]: labelValue(claim.metadata?.uid ?? ''),
    [SNAPSHOT_LABELS.statefulSet]: labelValue(statefulSet),
  };
  if (entityRef) labels[SNAPSHOT_LABELS.entity] = labelValue(entityRef);
  return { labels, annotations };
}

/**
 * The claim a snapshot was taken of: its `spec.source` (immutable), else the
 * claim-name annotation, at most a name's length (annotations are anyone's
 * who may edit the snapshot, and this text goes into answers and events).
 */
export function sourceClaimOf(snapshot: VolumeSnapshot): string {
  return (
    snapshot.spec?.source?.persistentVolumeClaimName ??
    snapshot.metadata?.annotations?.[SNAPSHOT_ANNOTATIONS.claimName] ??
    ''
  ).slice(0, 253);
}
