import { KubeObject } from '../types';
import { Cause, StructuralSchema } from './structuralSchema';

/**
 * The OpenAPI v3 schemas of the snapshot.storage.k8s.io/v1 CRDs as
 * kubernetes-csi/external-snapshotter (v8) installs them, and their
 * x-kubernetes-validations rules, written out here as checks (no CEL).
 */

const str = (description: string): StructuralSchema => ({
  type: 'string',
  description,
});
const deletionPolicy: StructuralSchema = {
  type: 'string',
  enum: ['Delete', 'Retain'],
  description:
    'Whether the VolumeSnapshotContent and the physical snapshot are deleted (Delete) or kept (Retain) when the VolumeSnapshot bound to it is deleted.',
};
const snapshotError: StructuralSchema = {
  type: 'object',
  description:
    'The last error taking the snapshot, if any; the controller retries.',
  properties: {
    message: str('A string detailing the error; may be logged.'),
    time: {
      type: 'string',
      format: 'date-time',
      description: 'When it happened.',
    },
  },
};
const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

export const VOLUME_SNAPSHOT_SCHEMA: StructuralSchema = {
  type: 'object',
  description:
    "A user's request for a snapshot of a volume, or for a pre-existing snapshot to be used.",
  required: ['spec'],
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      description: 'What the user asks for; the source is immutable.',
      required: ['source'],
      properties: {
        source: {
          type: 'object',
          description:
            'Where the snapshot comes from: exactly one of a PersistentVolumeClaim in the same namespace (dynamic) or a pre-existing VolumeSnapshotContent.',
          properties: {
            persistentVolumeClaimName: str(
              "The claim in the snapshot's namespace to take a snapshot of.",
            ),
            volumeSnapshotContentName: str(
              'A pre-existing VolumeSnapshotContent that represents this snapshot.',
            ),
          },
        },
        volumeSnapshotClassName: str(
          "The VolumeSnapshotClass; when unset, the default class of the volume's CSI driver.",
        ),
      },
    },
    status: {
      type: 'object',
      description: 'What the snapshot controller observed.',
      properties: {
        boundVolumeSnapshotContentName: str(
          'The VolumeSnapshotContent this snapshot is bound to.',
        ),
        creationTime: {
          type: 'string',
          format: 'date-time',
          description: 'When the storage system cut the snapshot.',
        },
        error: snapshotError,
        readyToUse: {
          type: 'boolean',
          description: 'Whether a volume can be restored from the snapshot.',
        },
        restoreSize: {
          'x-kubernetes-int-or-string': true,
          pattern: QUANTITY_PATTERN,
          description:
            'The smallest size a volume restored from the snapshot may have.',
        },
        volumeGroupSnapshotName: str('The VolumeGroupSnapshot it belongs to.'),
      },
    },
  },
};

export const VOLUME_SNAPSHOT_CONTENT_SCHEMA: StructuralSchema = {
  type: 'object',
  description: 'The actual snapshot of a volume in the storage system.',
  required: ['spec'],
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['deletionPolicy', 'driver', 'source', 'volumeSnapshotRef'],
      properties: {
        deletionPolicy,
        driver: str('The CSI driver that takes (took) the snapshot.'),
        source: {
          type: 'object',
          description:
            'Exactly one of a volume to take a snapshot of (dynamic) or an existing snapshot (pre-provisioned); immutable.',
          properties: {
            snapshotHandle: str(
              'The CSI snapshot id of a pre-existing snapshot.',
            ),
            volumeHandle: str('The CSI volume id to take a snapshot of.'),
          },
        },
        sourceVolumeMode: {
          type: 'string',
          description: 'Filesystem or Block, of the source volume.',
        },
        volumeSnapshotClassName: str(
          'The VolumeSnapshotClass it was made with.',
        ),
        volumeSnapshotRef: {
          type: 'object',
          description: 'The VolumeSnapshot this content is bound to.',
          properties: {
            apiVersion: { type: 'string' },
            fieldPath: { type: 'string' },
            kind: { type: 'string' },
            name: { type: 'string' },
            namespace: { type: 'string' },
            resourceVersion: { type: 'string' },
            uid: { type: 'string' },
          },
        },
      },
    },
    status: {
      type: 'object',
      properties: {
        creationTime: {
          type: 'integer',
          description:
            'When the snapshot was cut, in nanoseconds since the Unix epoch.',
        },
        error: snapshotError,
        readyToUse: { type: 'boolean' },
        restoreSize: {
          type: 'integer',
          minimum: 0,
          description: 'The smallest size of a restored volume, in bytes.',
        },
        snapshotHandle: str('The CSI snapshot id in the storage system.'),
        volumeGroupSnapshotHandle: { type: 'string' },
      },
    },
  },
};

export const VOLUME_SNAPSHOT_CLASS_SCHEMA: StructuralSchema = {
  type: 'object',
  description:
    'How snapshots of one CSI driver\'s volumes are taken. The annotation snapshot.storage.kubernetes.io/is-default-class: "true" marks the default class of its driver.',
  required: ['deletionPolicy', 'driver'],
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    deletionPolicy,
    driver: str('The CSI driver that takes the snapshots.'),
    parameters: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'Driver-specific parameters.',
    },
  },
};

/** kubectl get columns: the CRDs' additionalPrinterColumns. */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'boolean' | 'integer' | 'date';
  jsonPath: string;
  description: string;
  priority?: number;
}

const ageColumn: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'When the object was created.',
};

export const PRINTER_COLUMNS: Record<string, PrinterColumn[]> = {
  VolumeSnapshot: [
    {
      name: 'ReadyToUse',
      type: 'boolean',
      jsonPath: '.status.readyToUse',
      description:
        'Indicates if the snapshot is ready to be used to restore a volume.',
    },
    {
      name: 'SourcePVC',
      type: 'string',
      jsonPath: '.spec.source.persistentVolumeClaimName',
      description: 'The PVC the snapshot is taken of (dynamic provisioning).',
    },
    {
      name: 'SourceSnapshotContent',
      type: 'string',
      jsonPath: '.spec.source.volumeSnapshotContentName',
      description: 'The pre-existing VolumeSnapshotContent it represents.',
    },
    {
      name: 'RestoreSize',
      type: 'string',
      jsonPath: '.status.restoreSize',
      description: 'The smallest size a restored volume may have.',
    },
    {
      name: 'SnapshotClass',
      type: 'string',
      jsonPath: '.spec.volumeSnapshotClassName',
      description: 'The VolumeSnapshotClass it is made with.',
    },
    {
      name: 'SnapshotContent',
      type: 'string',
      jsonPath: '.status.boundVolumeSnapshotContentName',
      description: 'The VolumeSnapshotContent it is bound to.',
    },
    {
      name: 'CreationTime',
      type: 'date',
      jsonPath: '.status.creationTime',
      description: 'When the storage system cut the snapshot.',
    },
    ageColumn,
  ],
  VolumeSnapshotContent: [
    {
      name: 'ReadyToUse',
      type: 'boolean',
      jsonPath: '.status.readyToUse',
      description:
        'Indicates if the snapshot is ready to be used to restore a volume.',
    },
    {
      name: 'RestoreSize',
      type: 'integer',
      jsonPath: '.status.restoreSize',
      description: 'The smallest size of a restored volume, in bytes.',
    },
    {
      name: 'DeletionPolicy',
      type: 'string',
      jsonPath: '.spec.deletionPolicy',
      description: 'Delete or Retain, when its VolumeSnapshot is deleted.',
    },
    {
      name: 'Driver',
      type: 'string',
      jsonPath: '.spec.driver',
      description: 'The CSI driver.',
    },
    {
      name: 'VolumeSnapshotClass',
      type: 'string',
      jsonPath: '.spec.volumeSnapshotClassName',
      description: 'The VolumeSnapshotClass it was made with.',
    },
    {
      name: 'VolumeSnapshot',
      type: 'string',
      jsonPath: '.spec.volumeSnapshotRef.name',
      description: 'The VolumeSnapshot it is bound to.',
    },
    {
      name: 'VolumeSnapshotNamespace',
      type: 'string',
      jsonPath: '.spec.volumeSnapshotRef.namespace',
      description: 'The namespace of that VolumeSnapshot.',
    },
    ageColumn,
  ],
  VolumeSnapshotClass: [
    {
      name: 'Driver',
      type: 'string',
      jsonPath: '.driver',
      description: 'The CSI driver.',
    },
    {
      name: 'DeletionPolicy',
      type: 'string',
      jsonPath: '.deletionPolicy',
      description: 'Delete or Retain.',
    },
    ageColumn,
  ],
};

const has = (o: any, field: string) => o?.[field] !== undefined;
const ruleCause = (field: string, message: string): Cause => ({
  field,
  message: `Invalid value: "object": ${message}`,
});

/** Exactly one of two source fields, each immutable and not removable once set. */
function sourceRules(
  source: any,
  old: any,
  [a, b]: [string, string],
  path: string,
  causes: Cause[],
) {
  if (old) {
    for (const field of [a, b]) {
      if (has(old, field) && !has(source, field))
        causes.push(ruleCause(path, `${field} is required once set`));
      if (has(old, field) && has(source, field) && old[field] !== source[field])
        causes.push({
          field: `${path}.${field}`,
          message: `Invalid value: "string": ${field} is immutable`,
        });
    }
  }
  if (has(source, a) === has(source, b))
    causes.push(ruleCause(path, `exactly one of ${b} and ${a} must be set`));
}

/** The CRDs' x-kubernetes-validations, as checks. */
export function snapshotRules(
  obj: KubeObject,
  old: KubeObject | undefined,
): Cause[] {
  const causes: Cause[] = [];
  switch (obj.kind) {
    case 'VolumeSnapshot':
      if (obj.spec?.source)
        sourceRules(
          obj.spec.source,
          old?.spec?.source,
          ['persistentVolumeClaimName', 'volumeSnapshotContentName'],
          'spec.source',
          causes,
        );
      if (obj.spec?.volumeSnapshotClassName === '')
        causes.push({
          field: 'spec.volumeSnapshotClassName',
          message:
            'Invalid value: "string": volumeSnapshotClassName must not be the empty string when set',
        });
      break;
    case 'VolumeSnapshotContent': {
      if (obj.spec?.source)
        sourceRules(
          obj.spec.source,
          old?.spec?.source,
          ['snapshotHandle', 'volumeHandle'],
          'spec.source',
          causes,
        );
      const ref = obj.spec?.volumeSnapshotRef;
      if (ref && !(has(ref, 'name') && has(ref, 'namespace')))
        causes.push(
          ruleCause(
            'spec.volumeSnapshotRef',
            'both spec.volumeSnapshotRef.name and spec.volumeSnapshotRef.namespace must be set',
          ),
        );
      if (
        old?.spec?.sourceVolumeMode !== undefined &&
        obj.spec?.sourceVolumeMode !== old.spec.sourceVolumeMode
      )
        causes.push({
          field: 'spec.sourceVolumeMode',
          message: 'Invalid value: "string": sourceVolumeMode is immutable',
        });
      break;
    }
    default:
  }
  return causes;
}

export const SNAPSHOT_SCHEMAS: Record<string, StructuralSchema> = {
  VolumeSnapshot: VOLUME_SNAPSHOT_SCHEMA,
  VolumeSnapshotContent: VOLUME_SNAPSHOT_CONTENT_SCHEMA,
  VolumeSnapshotClass: VOLUME_SNAPSHOT_CLASS_SCHEMA,
};
