import type {
  V1PersistentVolumeClaim,
  V1PersistentVolumeClaimSpec,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { parseQuantity } from 'backstage-plugin-pvc-pruner-common';
import type { VolumeSnapshot } from '../kubernetes';
import { parseClaimName } from '../orphans/orphanRule';
import { SNAPSHOT_ANNOTATIONS } from './snapshotMetadata';

/** Annotations a restored claim carries: which snapshot it came from, and who asked. */
export const RESTORED_ANNOTATIONS = {
  restoredFrom: 'pvc-pruner.backstage.io/restored-from',
  restoredBy: 'pvc-pruner.backstage.io/restored-by',
} as const;

/** The note `snapshotMetadata` keeps instead of a claim's labels when they were too many. */
const LABELS_NOT_KEPT = 'pvc-pruner.backstage.io/labels-not-kept';

/** The most labels a restored claim gets from a snapshot's annotation; more is refused. */
export const MAX_RESTORED_LABELS = 64;

const ACCESS_MODES = new Set([
  'ReadWriteOnce',
  'ReadOnlyMany',
  'ReadWriteMany',
  'ReadWriteOncePod',
]);
const VOLUME_MODES = new Set(['Filesystem', 'Block']);

/** A label value, and a label key's name part (at most 63 characters each, as Kubernetes validates them). */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
/** A DNS subdomain (a label key's prefix, a StorageClass name): at most 253 characters. */
const DNS_SUBDOMAIN =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (
    prefix !== undefined &&
    !(prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix))
  )
    return false;
  return name.length <= 63 && LABEL_NAME.test(name);
}

function isLabelValue(value: unknown): value is string {
  return (
    typeof value === 'string' && value.length <= 63 && LABEL_VALUE.test(value)
  );
}

/** Text from an annotation, cut short for a message. */
function quoted(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

/** The claim a restore creates from a snapshot, or why the snapshot cannot be restored as it is. */
export type RestorePlan =
  | {
      ok: true;
      claim: V1PersistentVolumeClaim;
      claimName: string;
      ordinal: number;
      /** The claim's storage request: the larger of the original request and the snapshot's restoreSize. */
      requested: string;
      /** Set when the snapshot kept a note instead of the claim's labels: the claim is restored without them. */
      labelsNotKept?: string;
    }
  | { ok: false; reason: string };

/**
 * Why a VolumeSnapshot cannot be restored from now (being deleted, failed,
 * not ready, bound to no content), or undefined.
 */
export function notReadyReason(snapshot: VolumeSnapshot): string | undefined {
  const name = snapshot.metadata?.name;
  if (snapshot.metadata?.deletionTimestamp)
    return `VolumeSnapshot ${name} is being deleted`;
  const error = snapshot.status?.error;
  if (error)
    return `VolumeSnapshot ${name} failed: ${
      error.message?.slice(0, 1000) ||
      'the snapshot controller reported an error without a message'
    }`;
  if (snapshot.status?.readyToUse !== true)
    return `VolumeSnapshot ${name} is not ready to use yet`;
  if (!snapshot.status?.boundVolumeSnapshotContentName)
    return `VolumeSnapshot ${name} is bound to no VolumeSnapshotContent`;
  return undefined;
}

function sizeOf(
  what: string,
  text: unknown,
): { text: string; bytes: number } | string | undefined {
  if (text === undefined || text === null) return undefined;
  const written = typeof text === 'number' ? String(text) : text;
  const bytes =
    typeof written === 'string' ? parseQuantity(written) : undefined;
  if (
    typeof written !== 'string' ||
    bytes === undefined ||
    !(bytes > 0) ||
    !Number.isFinite(bytes)
  )
    return `its ${what} (${quoted(
      String(written),
    )}) is not a Kubernetes quantity of storage`;
  return { text: written.trim(), bytes };
}

function labelsOf(
  json: string | undefined,
): { labels: Record<string, string>; notKept?: string } | string {
  if (json === undefined) return { labels: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    return `its ${SNAPSHOT_ANNOTATIONS.claimLabels} annotation is not a JSON object of labels`;
  const entries = Object.entries(parsed as Record<string, unknown>);
  if (entries.length === 1 && entries[0][0] === LABELS_NOT_KEPT)
    return { labels: {}, notKept: String(entries[0][1]) };
  if (entries.length > MAX_RESTORED_LABELS)
    return `its ${SNAPSHOT_ANNOTATIONS.claimLabels} annotation has ${entries.length} labels, more than the ${MAX_RESTORED_LABELS} a restore sets`;
  for (const [key, value] of entries) {
    if (!isLabelKey(key))
      return `its ${SNAPSHOT_ANNOTATIONS.claimLabels} annotation has ${quoted(
        key,
      )}, which is not a label key`;
    if (!isLabelValue(value))
      return `its ${
        SNAPSHOT_ANNOTATIONS.claimLabels
      } annotation gives label ${quoted(key)} the value ${quoted(
        String(value),
      )}, which is not a label value`;
  }
  return { labels: Object.fromEntries(entries) as Record<string, string> };
}

function accessModesOf(json: string | undefined): string[] | string {
  let parsed: unknown;
  try {
    parsed = json === undefined ? undefined : JSON.parse(json);
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length === 0 ||
    parsed.length > ACCESS_MODES.size ||
    new Set(parsed).size !== parsed.length ||
    !parsed.every(m => typeof m === 'string' && ACCESS_MODES.has(m))
  )
    return `its ${SNAPSHOT_ANNOTATIONS.accessModes} annotation (${quoted(
      String(json),
    )}) is not a JSON list of access modes (${[...ACCESS_MODES].join(', ')})`;
  return parsed as string[];
}

type Size = { text: string; bytes: number };

/**
 * The claim's class, modes and size as the StatefulSet's own template makes
 * them (volumeClaimTemplates are immutable, so they are what the pruned claim
 * had), the annotations only cross-checked: whoever may edit a snapshot
 * could otherwise have a restore create a bigger disk, on another class,
 * billed to the user who clicked. A template without a class gets the
 * cluster's default, as the StatefulSet's own claim does. The size is the
 * larger of the template's request and the snapshot's restoreSize (a claim
 * expanded after its creation has the larger restoreSize); a requested-size
 * annotation above that is refused.
 */
function boundToTemplate(
  template: V1PersistentVolumeClaimSpec,
  written: {
    storageClass?: string;
    accessModes: string[];
    volumeMode?: string;
    requested?: Size;
    restoreSize?: Size;
  },
):
  | {
      storageClass?: string;
      accessModes: string[];
      volumeMode?: string;
      size: Size;
    }
  | string {
  const storageClass = template.storageClassName ?? undefined;
  if (
    storageClass !== undefined &&
    written.storageClass !== undefined &&
    written.storageClass !== storageClass
  )
    return `its ${SNAPSHOT_ANNOTATIONS.storageClass} annotation (${quoted(
      written.storageClass,
    )}) is not the StorageClass of the StatefulSet's template (${storageClass})`;
  const accessModes = template.accessModes ?? [];
  const sameModes =
    accessModes.length === written.accessModes.length &&
    accessModes.every(m => written.accessModes.includes(m));
  if (!sameModes)
    return `its ${
      SNAPSHOT_ANNOTATIONS.accessModes
    } annotation (${written.accessModes.join(
      ', ',
    )}) is not the access modes of the StatefulSet's template (${
      accessModes.join(', ') || 'none'
    })`;
  const volumeMode = template.volumeMode ?? undefined;
  if ((written.volumeMode ?? 'Filesystem') !== (volumeMode ?? 'Filesystem'))
    return `its ${SNAPSHOT_ANNOTATIONS.volumeMode} annotation (${
      written.volumeMode
    }) is not the volume mode of the StatefulSet's template (${
      volumeMode ?? 'Filesystem'
    })`;
  const fromTemplate = sizeOf(
    "template's storage request",
    template.resources?.requests?.storage,
  );
  const candidates = [fromTemplate, written.restoreSize].filter(
    (s): s is Size => s !== undefined && typeof s !== 'string',
  );
  if (candidates.length === 0)
    return "neither the StatefulSet's template nor status.restoreSize says a size";
  const size = candidates.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  if (written.requested && written.requested.bytes > size.bytes)
    return `its ${SNAPSHOT_ANNOTATIONS.requestedSize} annotation (${written.requested.text}) is larger than the template's request and the snapshot's restoreSize (${size.text})`;
  return {
    ...(storageClass !== undefined ? { storageClass } : {}),
    accessModes,
    ...(volumeMode !== undefined ? { volumeMode } : {}),
    size,
  };
}

/**
 * The claim to create from one of pvc-pruner's snapshots of `statefulSet`'s
 * claims, from what the snapshot's annotations say the claim was. They are
 * written by pvc-pruner but editable by anyone who may edit the snapshot,
 * so every one is checked, and the plan is refused rather than bent:
 *
 * - the claim name must be the snapshot's source claim and a claim of this
 *   StatefulSet, `<template>-<statefulSet>-<ordinal>` for one of its
 *   volumeClaimTemplates and an ordinal it can run (never an arbitrary name);
 * - labels must be at most {@link MAX_RESTORED_LABELS} valid label keys and
 *   values (a snapshot that kept a note instead restores none, and says so);
 * - the StorageClass a name, the access modes and volume mode Kubernetes'
 *   own;
 * - the size a quantity: the larger of the original request and the
 *   snapshot's restoreSize;
 * - against a StatefulSet whose volumeClaimTemplates carry their spec (the
 *   live one a restore reads), the class, modes and size are the template's
 *   ({@link boundToTemplate}); the card's list judges with template names
 *   only, so a restore may still refuse what it showed as restorable.
 *
 * Readiness is {@link notReadyReason}'s to judge.
 */
export function restorePlan(
  snapshot: VolumeSnapshot,
  statefulSet: V1StatefulSet,
  restoredBy?: string,
): RestorePlan {
  const name = snapshot.metadata?.name ?? '';
  const namespace = snapshot.metadata?.namespace;
  const annotations = snapshot.metadata?.annotations ?? {};
  const stsName = statefulSet.metadata?.name ?? '';
  const refuse = (reason: string): RestorePlan => ({
    ok: false,
    reason: `VolumeSnapshot ${name} cannot be restored: ${reason}`,
  });

  const claimName = annotations[SNAPSHOT_ANNOTATIONS.claimName];
  if (!claimName)
    return refuse(
      `it has no ${SNAPSHOT_ANNOTATIONS.claimName} annotation naming the claim it was taken of`,
    );
  const source = snapshot.spec?.source?.persistentVolumeClaimName;
  if (source !== claimName)
    return refuse(
      `its ${SNAPSHOT_ANNOTATIONS.claimName} annotation (${quoted(
        claimName,
      )}) is not the claim it was taken of (${source ?? 'none'})`,
    );
  const parsed = parseClaimName(claimName, statefulSet);
  // parseClaimName matches the whole name: a template's prefix, then a decimal ordinal (no sign, no leading zero).
  if (parsed?.ordinal === undefined)
    return refuse(
      `${quoted(
        claimName,
      )} is not a claim of StatefulSet ${stsName} (<template>-${stsName}-<ordinal> for one of its volumeClaimTemplates)`,
    );
  const start = statefulSet.spec?.ordinals?.start ?? 0;
  if (parsed.ordinal < start)
    return refuse(
      `${claimName} is of ordinal ${parsed.ordinal}, below ${stsName}'s first (spec.ordinals.start ${start}): no scale-up would mount it`,
    );

  const labels = labelsOf(annotations[SNAPSHOT_ANNOTATIONS.claimLabels]);
  if (typeof labels === 'string') return refuse(labels);
  const storageClass = annotations[SNAPSHOT_ANNOTATIONS.storageClass];
  if (
    storageClass !== undefined &&
    !(storageClass.length <= 253 && DNS_SUBDOMAIN.test(storageClass))
  )
    return refuse(
      `its ${SNAPSHOT_ANNOTATIONS.storageClass} annotation (${quoted(
        storageClass,
      )}) is not a StorageClass name`,
    );
  const accessModes = accessModesOf(
    annotations[SNAPSHOT_ANNOTATIONS.accessModes],
  );
  if (typeof accessModes === 'string') return refuse(accessModes);
  const volumeMode = annotations[SNAPSHOT_ANNOTATIONS.volumeMode];
  if (volumeMode !== undefined && !VOLUME_MODES.has(volumeMode))
    return refuse(
      `its ${SNAPSHOT_ANNOTATIONS.volumeMode} annotation (${quoted(
        volumeMode,
      )}) is neither Filesystem nor Block`,
    );

  const requested = sizeOf(
    `${SNAPSHOT_ANNOTATIONS.requestedSize} annotation`,
    annotations[SNAPSHOT_ANNOTATIONS.requestedSize],
  );
  if (typeof requested === 'string') return refuse(requested);
  const restoreSize = sizeOf(
    'status.restoreSize',
    snapshot.status?.restoreSize,
  );
  if (typeof restoreSize === 'string') return refuse(restoreSize);
  const sizes = [requested, restoreSize].filter(
    (s): s is { text: string; bytes: number } => s !== undefined,
  );
  if (sizes.length === 0)
    return refuse(
      `it says no size (no ${SNAPSHOT_ANNOTATIONS.requestedSize} annotation, no status.restoreSize)`,
    );
  const template = statefulSet.spec?.volumeClaimTemplates?.find(
    t => t.metadata?.name === parsed.template,
  );
  const bound = template?.spec
    ? boundToTemplate(template.spec, {
        storageClass,
        accessModes,
        volumeMode,
        requested,
        restoreSize,
      })
    : {
        storageClass,
        accessModes,
        volumeMode,
        size: sizes.reduce((a, b) => (b.bytes > a.bytes ? b : a)),
      };
  if (typeof bound === 'string') return refuse(bound);
  const size = bound.size;

  const claim: V1PersistentVolumeClaim = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName,
      ...(namespace ? { namespace } : {}),
      labels: labels.labels,
      annotations: {
        [RESTORED_ANNOTATIONS.restoredFrom]: name,
        ...(restoredBy
          ? { [RESTORED_ANNOTATIONS.restoredBy]: restoredBy }
          : {}),
      },
    },
    spec: {
      accessModes: bound.accessModes,
      ...(bound.storageClass !== undefined
        ? { storageClassName: bound.storageClass }
        : {}),
      ...(bound.volumeMode !== undefined
        ? { volumeMode: bound.volumeMode }
        : {}),
      resources: { requests: { storage: size.text } },
      dataSource: {
        apiGroup: 'snapshot.storage.k8s.io',
        kind: 'VolumeSnapshot',
        name,
      },
    },
  };
  return {
    ok: true,
    claim,
    claimName,
    ordinal: parsed.ordinal,
    requested: size.text,
    ...(labels.notKept !== undefined ? { labelsNotKept: labels.notKept } : {}),
  };
}
