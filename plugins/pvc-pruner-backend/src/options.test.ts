import { ConfigReader } from '@backstage/config';
import { readOptions } from './options';

const options = (pvcPruner: object) =>
  readOptions(new ConfigReader({ pvcPruner }));

describe('readOptions', () => {
  it('has the documented defaults', () => {
    expect(options({})).toMatchObject({
      retentionDays: 90,
      runningJobsPerUser: 10,
      eventStreamsPerUser: 20,
      allowPruneWithoutPermissionFramework: false,
      removedRequirePermissionFramework: undefined,
      reclaimLeaseNamespace: 'default',
    });
    expect(
      options({ reclaim: { leaseNamespace: 'platform-tools' } })
        .reclaimLeaseNamespace,
    ).toBe('platform-tools');
  });

  it.each([
    [
      { retentionDays: 0.5 },
      'pvcPruner: retentionDays must be at least 1, got 0.5',
    ],
    [
      { retentionDays: 0 },
      'pvcPruner: retentionDays must be a positive number, got 0',
    ],
    [
      { limits: { runningJobsPerUser: 2.5 } },
      'pvcPruner: limits.runningJobsPerUser must be a whole number, got 2.5',
    ],
    [
      { reclaim: { leaseNamespace: 'Not/A-Namespace' } },
      'pvcPruner: reclaim.leaseNamespace must be a namespace name, got "Not/A-Namespace"',
    ],
    [
      { limits: { eventStreamsPerUser: -1 } },
      'pvcPruner: limits.eventStreamsPerUser must be a positive number, got -1',
    ],
  ])('refuses %j', (pvcPruner, message) => {
    expect(() => options(pvcPruner)).toThrow(message);
  });

  it('reads the namespace owner annotation, and nothing when it is unset', () => {
    expect(options({}).namespaceOwnerAnnotation).toBeUndefined();
    expect(
      options({ ownership: { namespaceOwnerAnnotation: 'backstage.io/owner' } })
        .namespaceOwnerAnnotation,
    ).toBe('backstage.io/owner');
    expect(
      options({ ownership: { namespaceOwnerAnnotation: 'owner' } })
        .namespaceOwnerAnnotation,
    ).toBe('owner');
  });

  it.each(['backstage.io/', '/owner', 'Backstage.IO/owner', 'a b', 'x/y/z'])(
    'refuses %j as a namespace owner annotation, saying what it wants',
    key => {
      expect(() =>
        options({ ownership: { namespaceOwnerAnnotation: key } }),
      ).toThrow(
        `pvcPruner: ownership.namespaceOwnerAnnotation must be a Kubernetes annotation key such as backstage.io/owner, got "${key}"`,
      );
    },
  );

  it('keeps the claims of paused StatefulSets unless told to offer them', () => {
    expect(options({}).pausedStatefulSets).toBe('keep');
    expect(options({ pausedStatefulSets: 'keep' }).pausedStatefulSets).toBe(
      'keep',
    );
    expect(options({ pausedStatefulSets: 'offer' }).pausedStatefulSets).toBe(
      'offer',
    );
  });

  it('refuses any other value of pausedStatefulSets, naming both it allows', () => {
    expect(() => options({ pausedStatefulSets: 'delete' })).toThrow(
      "pvcPruner: pausedStatefulSets must be 'keep' (keep the claims of a StatefulSet scaled to 0, the default) or 'offer' (offer them as orphans), got 'delete'",
    );
    expect(() => options({ pausedStatefulSets: true })).toThrow(
      /pausedStatefulSets/,
    );
  });
});

describe('readOptions: snapshots', () => {
  it('are off, kept 7 days, waited for 300 s and required unless told', () => {
    expect(options({}).snapshots).toEqual({
      enabled: false,
      retentionDays: 7,
      timeoutMs: 300_000,
      required: true,
      classByStorageClass: new Map(),
      maxKeepDays: 90,
    });
  });

  it('reads every setting, StorageClass names with dots included', () => {
    const snapshots = options({
      snapshots: {
        enabled: true,
        retentionDays: 14,
        timeoutSeconds: 30,
        required: false,
        storageClasses: { gp3: 'ebs-snapshots', 'fast.ssd': 'ssd.snaps' },
        maxKeepDays: 365,
      },
    }).snapshots;
    expect(snapshots).toEqual({
      enabled: true,
      retentionDays: 14,
      timeoutMs: 30_000,
      required: false,
      classByStorageClass: new Map([
        ['gp3', 'ebs-snapshots'],
        ['fast.ssd', 'ssd.snaps'],
      ]),
      maxKeepDays: 365,
    });
  });

  it.each([
    [
      { retentionDays: 0 },
      'pvcPruner: snapshots.retentionDays must be a positive number, got 0',
    ],
    [
      { retentionDays: 1.5 },
      'pvcPruner: snapshots.retentionDays must be a whole number, got 1.5',
    ],
    [
      { maxKeepDays: 0 },
      'pvcPruner: snapshots.maxKeepDays must be a positive number, got 0',
    ],
    [
      { maxKeepDays: 7.5 },
      'pvcPruner: snapshots.maxKeepDays must be a whole number, got 7.5',
    ],
    [
      { maxKeepDays: 3651 },
      'pvcPruner: snapshots.maxKeepDays must be at most 3650 (ten years), got 3651',
    ],
    [
      { retentionDays: 3651 },
      'pvcPruner: snapshots.retentionDays must be at most 3650 (ten years), got 3651',
    ],
    [
      { timeoutSeconds: 3601 },
      'pvcPruner: snapshots.timeoutSeconds must be at most 3600 (an hour), got 3601',
    ],
    [
      { timeoutSeconds: -5 },
      'pvcPruner: snapshots.timeoutSeconds must be a positive number, got -5',
    ],
    [
      { storageClasses: { gp3: 'Ebs Snapshots' } },
      "pvcPruner: snapshots.storageClasses.gp3 must be the name of a VolumeSnapshotClass (lowercase letters, digits, '-' and '.'), got \"Ebs Snapshots\"",
    ],
    [
      { storageClasses: { gp3: 7 } },
      'pvcPruner: snapshots.storageClasses.gp3 must be the name of a VolumeSnapshotClass',
    ],
    [
      { storageClasses: { 'GP 3': 'ebs' } },
      'pvcPruner: snapshots.storageClasses.GP 3: "GP 3" is not a StorageClass name',
    ],
    [
      { storageClasses: ['ebs'] },
      'pvcPruner: snapshots.storageClasses must map StorageClass names to VolumeSnapshotClass names',
    ],
  ])('refuses snapshots %j, naming the key', (snapshots, message) => {
    expect(() => options({ snapshots })).toThrow(message);
  });
});
