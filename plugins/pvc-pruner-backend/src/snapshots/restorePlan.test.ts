import type {
  V1PersistentVolumeClaimSpec,
  V1StatefulSet,
} from '@kubernetes/client-node';
import type { VolumeSnapshot } from '../kubernetes';
import { notReadyReason, restorePlan } from './restorePlan';

const STS: V1StatefulSet = {
  metadata: { name: 'orders-db', namespace: 'shop' },
  spec: {
    replicas: 2,
    selector: {},
    serviceName: 'orders-db',
    template: {},
    volumeClaimTemplates: [
      { metadata: { name: 'data' } },
      { metadata: { name: 'wal' } },
    ],
  },
};

/** A ready snapshot of data-orders-db-3, as SnapshotTaker leaves one. */
function snapshotOf(
  annotations: Record<string, string | undefined> = {},
  more: Partial<VolumeSnapshot> = {},
  claimName = 'data-orders-db-3',
): VolumeSnapshot {
  const all: Record<string, string | undefined> = {
    'pvc-pruner.backstage.io/claim-name': claimName,
    'pvc-pruner.backstage.io/claim-labels': JSON.stringify({ app: 'orders' }),
    'pvc-pruner.backstage.io/access-modes': JSON.stringify(['ReadWriteOnce']),
    'pvc-pruner.backstage.io/storage-class': 'standard',
    'pvc-pruner.backstage.io/requested-size': '10Gi',
    ...annotations,
  };
  return {
    metadata: {
      name: 'data-orders-db-3-abcdef12',
      namespace: 'shop',
      uid: 'snap-uid',
      annotations: Object.fromEntries(
        Object.entries(all).filter(([, v]) => v !== undefined),
      ) as Record<string, string>,
    },
    spec: { source: { persistentVolumeClaimName: claimName } },
    status: {
      readyToUse: true,
      restoreSize: '20Gi',
      boundVolumeSnapshotContentName: 'snapcontent-1',
    },
    ...more,
  };
}

const refusal = (snapshot: VolumeSnapshot, sts = STS) => {
  const plan = restorePlan(snapshot, sts, 'user:default/alice');
  if (plan.ok) throw new Error('expected a refusal');
  return plan.reason;
};

describe('restorePlan', () => {
  it('re-creates the claim under its name and labels, from the snapshot, at the larger of its sizes', () => {
    const plan = restorePlan(snapshotOf(), STS, 'user:default/alice');

    expect(plan).toEqual({
      ok: true,
      claimName: 'data-orders-db-3',
      ordinal: 3,
      requested: '20Gi',
      claim: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name: 'data-orders-db-3',
          namespace: 'shop',
          labels: { app: 'orders' },
          annotations: {
            'pvc-pruner.backstage.io/restored-from':
              'data-orders-db-3-abcdef12',
            'pvc-pruner.backstage.io/restored-by': 'user:default/alice',
          },
        },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'standard',
          resources: { requests: { storage: '20Gi' } },
          dataSource: {
            apiGroup: 'snapshot.storage.k8s.io',
            kind: 'VolumeSnapshot',
            name: 'data-orders-db-3-abcdef12',
          },
        },
      },
    });
  });

  it('requests the original size when it is larger than the restore size', () => {
    const plan = restorePlan(
      snapshotOf({ 'pvc-pruner.backstage.io/requested-size': '30Gi' }),
      STS,
    );
    expect(plan.ok && plan.requested).toBe('30Gi');
  });

  it.each([
    ['another StatefulSet’s claim', 'data-payments-db-3'],
    ['a name that is no claim of it', 'kube-system-token'],
    ['an ordinal with a leading zero', 'data-orders-db-03'],
    ['a suffix that is no ordinal', 'data-orders-db-3x'],
    ['a template it does not have', 'logs-orders-db-3'],
  ])('refuses a claim-name annotation of %s', (_what, claimName) => {
    expect(refusal(snapshotOf({}, {}, claimName))).toContain(
      'is not a claim of StatefulSet orders-db',
    );
  });

  it('refuses a claim-name annotation that is not the claim the snapshot was taken of', () => {
    const snapshot = snapshotOf({
      'pvc-pruner.backstage.io/claim-name': 'data-orders-db-4',
    });
    expect(refusal(snapshot)).toContain('is not the claim it was taken of');
  });

  it('refuses a snapshot without a claim-name annotation', () => {
    expect(
      refusal(snapshotOf({ 'pvc-pruner.backstage.io/claim-name': undefined })),
    ).toContain('has no pvc-pruner.backstage.io/claim-name annotation');
  });

  it('refuses an ordinal below spec.ordinals.start', () => {
    const sts = { ...STS, spec: { ...STS.spec!, ordinals: { start: 5 } } };
    expect(refusal(snapshotOf(), sts)).toContain('below orders-db');
  });

  it.each([
    ['not JSON', '{'],
    ['a list', '["a"]'],
    ['a bad key', JSON.stringify({ 'bad key!': 'x' })],
    ['a bad prefix', JSON.stringify({ 'Not_A.Domain/x': 'x' })],
    ['a value too long', JSON.stringify({ app: 'x'.repeat(64) })],
    ['a value that is no string', JSON.stringify({ app: 1 })],
    [
      'too many labels',
      JSON.stringify(
        Object.fromEntries(
          Array.from({ length: 65 }, (_, i) => [`l${i}`, 'v']),
        ),
      ),
    ],
  ])('refuses claim labels that are %s', (_what, labels) => {
    expect(
      refusal(snapshotOf({ 'pvc-pruner.backstage.io/claim-labels': labels })),
    ).toContain('claim-labels');
  });

  it('restores no labels, and says so, when the snapshot kept a note instead of them', () => {
    const plan = restorePlan(
      snapshotOf({
        'pvc-pruner.backstage.io/claim-labels': JSON.stringify({
          'pvc-pruner.backstage.io/labels-not-kept': 'too many to keep',
        }),
      }),
      STS,
    );
    expect(plan.ok && plan.claim.metadata?.labels).toEqual({});
    expect(plan.ok && plan.labelsNotKept).toBe('too many to keep');
  });

  it.each([
    ['storage-class', 'Not/A/Class'],
    ['access-modes', '["ReadWriteEverywhere"]'],
    ['access-modes', '[]'],
    ['volume-mode', 'Raw'],
    ['requested-size', 'ten gigs'],
  ])('refuses a %s annotation of %j', (key, value) => {
    expect(
      refusal(snapshotOf({ [`pvc-pruner.backstage.io/${key}`]: value })),
    ).toContain(key);
  });

  it('refuses a snapshot that says no size', () => {
    const snapshot = snapshotOf({
      'pvc-pruner.backstage.io/requested-size': undefined,
    });
    delete snapshot.status!.restoreSize;
    expect(refusal(snapshot)).toContain('says no size');
  });
});

/** orders-db as the API server answers it: its templates with their spec. */
function liveStatefulSet(
  data: V1PersistentVolumeClaimSpec = {
    accessModes: ['ReadWriteOnce'],
    storageClassName: 'standard',
    resources: { requests: { storage: '10Gi' } },
  },
): V1StatefulSet {
  return {
    ...STS,
    spec: {
      ...STS.spec!,
      volumeClaimTemplates: [
        { metadata: { name: 'data' }, spec: data },
        { metadata: { name: 'wal' }, spec: data },
      ],
    },
  };
}

describe('restorePlan against the live StatefulSet', () => {
  it('creates the claim its template makes, at the larger of its request and the restore size', () => {
    const plan = restorePlan(snapshotOf(), liveStatefulSet());
    expect(plan.ok && plan.claim.spec).toEqual({
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'standard',
      resources: { requests: { storage: '20Gi' } },
      dataSource: {
        apiGroup: 'snapshot.storage.k8s.io',
        kind: 'VolumeSnapshot',
        name: 'data-orders-db-3-abcdef12',
      },
    });
  });

  it.each<[string, Record<string, string>, string]>([
    [
      'a requested size above the template and the restore size',
      { 'pvc-pruner.backstage.io/requested-size': '100Ti' },
      'is larger than the template',
    ],
    [
      'another StorageClass',
      { 'pvc-pruner.backstage.io/storage-class': 'premium-io2' },
      "is not the StorageClass of the StatefulSet's template (standard)",
    ],
    [
      'other access modes',
      {
        'pvc-pruner.backstage.io/access-modes': JSON.stringify([
          'ReadWriteMany',
        ]),
      },
      "is not the access modes of the StatefulSet's template",
    ],
    [
      'another volume mode',
      { 'pvc-pruner.backstage.io/volume-mode': 'Block' },
      "is not the volume mode of the StatefulSet's template",
    ],
  ])(
    'refuses %s, which whoever may edit the snapshot could write',
    (_what, annotations, reason) => {
      expect(refusal(snapshotOf(annotations), liveStatefulSet())).toContain(
        reason,
      );
    },
  );

  it("leaves the class to the cluster's default when the template names none, whatever the annotation says", () => {
    const plan = restorePlan(
      snapshotOf({ 'pvc-pruner.backstage.io/storage-class': 'premium-io2' }),
      liveStatefulSet({
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '10Gi' } },
      }),
    );
    expect(plan.ok && plan.claim.spec?.storageClassName).toBeUndefined();
  });

  it('refuses a size that is not finite', () => {
    expect(
      refusal(
        snapshotOf({ 'pvc-pruner.backstage.io/requested-size': '1e400' }),
      ),
    ).toContain('is not a Kubernetes quantity of storage');
  });
});

describe('notReadyReason', () => {
  it('says why a snapshot cannot be restored from yet, and nothing for a ready one', () => {
    expect(notReadyReason(snapshotOf())).toBeUndefined();
    expect(
      notReadyReason(snapshotOf({}, { status: { readyToUse: false } })),
    ).toContain('not ready');
    expect(
      notReadyReason(
        snapshotOf(
          {},
          { status: { readyToUse: true, error: { message: 'x' } } },
        ),
      ),
    ).toContain('failed: x');
    expect(
      notReadyReason(snapshotOf({}, { status: { readyToUse: true } })),
    ).toContain('bound to no VolumeSnapshotContent');
  });
});
