import {
  VOLUME_SNAPSHOT_CLASS_SCHEMA,
  VOLUME_SNAPSHOT_CONTENT_SCHEMA,
  VOLUME_SNAPSHOT_SCHEMA,
} from './schemas';
import {
  prune,
  unknownFields,
  validateAgainstSchema,
} from './structuralSchema';

describe('structural schema checks', () => {
  it('names unknown fields at any depth, but not in maps or metadata', () => {
    const obj = {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotClass',
      metadata: { name: 'c', anything: 1 },
      driver: 'd',
      deletionPolicy: 'Delete',
      parameters: { free: 'form' },
      extra: true,
    };
    expect(unknownFields(VOLUME_SNAPSHOT_CLASS_SCHEMA, obj)).toEqual(['extra']);
    expect(
      unknownFields(VOLUME_SNAPSHOT_SCHEMA, {
        spec: { source: { persistentVolumeClaimName: 'a', pvc: 'b' } },
        status: { readyToUse: true, ready: true },
      }),
    ).toEqual(['spec.source.pvc', 'status.ready']);
  });

  it('prunes unknown fields and nulls', () => {
    const obj: any = {
      spec: {
        source: { persistentVolumeClaimName: 'a', pvc: 'b' },
        volumeSnapshotClassName: null,
      },
      bogus: 1,
    };
    prune(VOLUME_SNAPSHOT_SCHEMA, obj);
    expect(obj).toEqual({
      spec: { source: { persistentVolumeClaimName: 'a' } },
    });
  });

  it('reports types, required fields, enums and minimums as kube-apiserver does', () => {
    expect(
      validateAgainstSchema(VOLUME_SNAPSHOT_CONTENT_SCHEMA, {
        spec: {
          deletionPolicy: 'Keep',
          driver: 7,
          source: { volumeHandle: 'v' },
        },
        status: { restoreSize: -1, readyToUse: 'yes' },
      }),
    ).toEqual([
      {
        field: 'spec.volumeSnapshotRef',
        message: 'Required value',
        reason: 'FieldValueRequired',
      },
      {
        field: 'spec.deletionPolicy',
        message:
          'Unsupported value: "Keep": supported values: "Delete", "Retain"',
        reason: 'FieldValueNotSupported',
      },
      {
        field: 'spec.driver',
        message:
          'Invalid value: "integer": spec.driver in body must be of type string: "integer"',
        reason: 'FieldValueTypeInvalid',
      },
      {
        field: 'status.restoreSize',
        message:
          'Invalid value: -1: status.restoreSize in body should be greater than or equal to 0',
      },
      {
        field: 'status.readyToUse',
        message:
          'Invalid value: "string": status.readyToUse in body must be of type boolean: "string"',
        reason: 'FieldValueTypeInvalid',
      },
    ]);
    expect(validateAgainstSchema(VOLUME_SNAPSHOT_SCHEMA, {})).toEqual([
      {
        field: 'spec',
        message: 'Required value',
        reason: 'FieldValueRequired',
      },
    ]);
    expect(
      validateAgainstSchema(VOLUME_SNAPSHOT_SCHEMA, {
        spec: { source: { persistentVolumeClaimName: 'a' } },
        status: { restoreSize: '1Gi' },
      }),
    ).toEqual([]);
    expect(
      validateAgainstSchema(VOLUME_SNAPSHOT_SCHEMA, {
        spec: { source: { persistentVolumeClaimName: 'a' } },
        status: { restoreSize: 'lots' },
      }),
    ).toEqual([
      expect.objectContaining({
        field: 'status.restoreSize',
        message: expect.stringMatching(
          /^Invalid value: "lots": status.restoreSize in body should match/,
        ),
      }),
    ]);
  });
});
