import { PVC_PROTECTION } from '../admission';
import {
  ANN_READY_AFTER_SECONDS,
  CONTENTS,
  PVC_AS_SOURCE_PROTECTION,
  SNAPSHOT_CLASSES,
  SNAPSHOTS,
} from '../snapshots/constants';
import { SnapshotBehaviours } from '../snapshots/SnapshotBehaviours';
import { KubeObject } from '../types';
import {
  eventsAbout,
  Harness,
  manifest,
  pvc,
  sleep,
  startHarness,
  statefulSet,
  updateSpec,
  waitFor,
} from './testUtils';

const CLAIMS = 'persistentvolumeclaims';
const VOLUMES = 'persistentvolumes';

function snapshotClass(
  name: string,
  deletionPolicy = 'Delete',
  annotations: Record<string, string> = {
    'snapshot.storage.kubernetes.io/is-default-class': 'true',
  },
  driver = 'ebs.csi.aws.com',
) {
  return manifest({
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshotClass',
    metadata: { name, annotations },
    driver,
    deletionPolicy,
  });
}

function volumeSnapshot(
  name: string,
  claim: string,
  extra: { className?: string; annotations?: Record<string, string> } = {},
) {
  return manifest({
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: {
      name,
      namespace: 'default',
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    spec: {
      source: { persistentVolumeClaimName: claim },
      ...(extra.className ? { volumeSnapshotClassName: extra.className } : {}),
    },
  });
}

describe('SnapshotController', () => {
  let h: Harness;
  let behaviours: SnapshotBehaviours;
  afterEach(() => h.stop());
  const snapshot = (name = 'snap') => h.store.get(SNAPSHOTS, 'default', name);
  const claim = (name = 'data') => h.store.get(CLAIMS, 'default', name);
  const content = (s: KubeObject | undefined) =>
    h.store.get(
      CONTENTS,
      undefined,
      s?.status?.boundVolumeSnapshotContentName ?? '',
    );

  async function boundClaim(name = 'data', size = '3Gi') {
    h.store.create(
      CLAIMS,
      pvc(name, { resources: { requests: { storage: size } } }),
    );
    return waitFor(
      () => claim(name)?.status?.phase === 'Bound' && claim(name),
      'claim bound',
    );
  }

  function start() {
    behaviours = new SnapshotBehaviours();
    h = startHarness({ snapshotBehaviours: behaviours });
  }

  it('binds a content both ways, holds the claim while not ready, then reports ready with size and time', async () => {
    start();
    h.store.create(SNAPSHOT_CLASSES, snapshotClass('csi'));
    const source = await boundClaim();
    const created = h.store.create(
      SNAPSHOTS,
      volumeSnapshot('snap', 'data', {
        annotations: { [ANN_READY_AFTER_SECONDS]: '300' },
      }),
    );
    // cut, not ready: the claim carries the source-protection finalizer
    const cut = await waitFor(
      () => snapshot()?.status?.creationTime && snapshot(),
      'snapshot cut',
    );
    expect(cut.status).toEqual({
      boundVolumeSnapshotContentName: `snapcontent-${created.metadata.uid}`,
      readyToUse: false,
      creationTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      restoreSize: '3Gi',
    });
    expect(cut.spec.volumeSnapshotClassName).toBe('csi');
    expect(cut.metadata.finalizers).toEqual([
      'snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection',
      'snapshot.storage.kubernetes.io/volumesnapshot-bound-protection',
    ]);
    expect(claim()!.metadata.finalizers).toEqual([
      PVC_PROTECTION,
      PVC_AS_SOURCE_PROTECTION,
    ]);
    const bound = content(cut)!;
    expect(bound.spec).toEqual({
      volumeSnapshotRef: {
        kind: 'VolumeSnapshot',
        namespace: 'default',
        name: 'snap',
        uid: created.metadata.uid,
        apiVersion: 'snapshot.storage.k8s.io/v1',
        resourceVersion: expect.any(String),
      },
      source: {
        volumeHandle: h.store.get(VOLUMES, undefined, source.spec.volumeName)!
          .spec.csi.volumeHandle,
      },
      volumeSnapshotClassName: 'csi',
      deletionPolicy: 'Delete',
      driver: 'ebs.csi.aws.com',
      sourceVolumeMode: 'Filesystem',
    });
    expect(bound.status).toMatchObject({
      readyToUse: false,
      restoreSize: 3 * 2 ** 30,
      snapshotHandle: expect.stringMatching(/^snap-/),
    });
    expect(bound.metadata.finalizers).toEqual([
      'snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection',
    ]);

    const ready = await waitFor(
      () => snapshot()?.status?.readyToUse && snapshot(),
      'snapshot ready',
    );
    expect(ready.status.error).toBeUndefined();
    expect(claim()!.metadata.finalizers).toEqual([PVC_PROTECTION]);
    expect(eventsAbout(h.store, ready).map(e => e.reason)).toEqual([
      'CreatingSnapshot',
      'SnapshotCreated',
      'SnapshotReady',
    ]);
  });

  it('survives the deletion of its claim, and restores a volume that names where its data came from', async () => {
    start();
    h.store.create(SNAPSHOT_CLASSES, snapshotClass('csi'));
    const source = await boundClaim('data', '2Gi');
    h.store.create(SNAPSHOTS, volumeSnapshot('snap', 'data'));
    const ready = await waitFor(
      () => snapshot()?.status?.readyToUse && snapshot(),
      'ready',
    );
    h.store.delete(CLAIMS, 'default', 'data');
    await waitFor(
      () =>
        !claim() && !h.store.get(VOLUMES, undefined, source.spec.volumeName),
      'claim and volume gone',
    );
    expect(snapshot()!.status.readyToUse).toBe(true);
    expect(content(snapshot())).toBeDefined();

    // A request below restoreSize is refused and the claim stays Pending, as external-provisioner does.
    const dataSource = {
      apiGroup: 'snapshot.storage.k8s.io',
      kind: 'VolumeSnapshot',
      name: 'snap',
    };
    const small = h.store.create(
      CLAIMS,
      pvc('small', { dataSource, resources: { requests: { storage: '1Gi' } } }),
    );
    expect(small.spec.dataSourceRef).toEqual(dataSource);
    const failed = await waitFor(
      () =>
        eventsAbout(h.store, small).find(
          e => e.reason === 'ProvisioningFailed',
        ),
      'provisioning failed',
    );
    expect(failed).toMatchObject({
      type: 'Warning',
      message: `failed to provision volume with StorageClass "standard": error getting handle for DataSource Type VolumeSnapshot by Name snap: requested volume size ${
        2 ** 30
      } is less than the size ${2 * 2 ** 30} for the source snapshot snap`,
    });
    await sleep(20);
    expect(claim('small')!.status.phase).toBe('Pending');

    const restored = h.store.create(
      CLAIMS,
      pvc('data', { dataSource, resources: { requests: { storage: '4Gi' } } }),
    );
    const bound = await waitFor(
      () => claim()?.status?.phase === 'Bound' && claim(),
      'restored claim bound',
    );
    const volume = h.store.get(VOLUMES, undefined, bound.spec.volumeName)!;
    expect(volume.spec.capacity.storage).toBe('4Gi');
    expect(volume.metadata.annotations).toEqual({
      'pv.kubernetes.io/provisioned-by': 'ebs.csi.aws.com',
      'kube-sim.io/restored-from-snapshot': 'default/snap',
      'kube-sim.io/restored-from-snapshot-uid': ready.metadata.uid,
      'kube-sim.io/restored-from-content':
        ready.status.boundVolumeSnapshotContentName,
      'kube-sim.io/restored-from-volume': source.spec.volumeName,
      'kube-sim.io/restored-from-claim-uid': source.metadata.uid,
      'kube-sim.io/data-origin-volume': source.spec.volumeName,
    });
    expect(restored.metadata.uid).not.toBe(source.metadata.uid);
  });

  it('waits to restore until the snapshot is ready', async () => {
    start();
    h.store.create(SNAPSHOT_CLASSES, snapshotClass('csi'));
    await boundClaim();
    behaviours.add({ snapshot: 'snap', readyAfterSeconds: 200 });
    h.store.create(SNAPSHOTS, volumeSnapshot('snap', 'data'));
    const restore = h.store.create(
      CLAIMS,
      pvc('copy', {
        dataSource: {
          apiGroup: 'snapshot.storage.k8s.io',
          kind: 'VolumeSnapshot',
          name: 'snap',
        },
        resources: { requests: { storage: '3Gi' } },
      }),
    );
    await waitFor(
      () =>
        eventsAbout(h.store, restore).some(e =>
          e.message.endsWith('snapshot snap is not Ready'),
        ),
      'not ready event',
    );
    expect(claim('copy')!.status.phase).toBe('Pending');
    await waitFor(() => claim('copy')?.status?.phase === 'Bound', 'restored');
    expect(snapshot()!.status.readyToUse).toBe(true);
  });

  it('reports an injected driver error as status.error, never ready, and keeps the claim until the snapshot goes', async () => {
    start();
    h.store.create(SNAPSHOT_CLASSES, snapshotClass('csi'));
    await boundClaim();
    behaviours.add({ claim: 'data', error: 'quota exceeded', times: 1 });
    h.store.create(SNAPSHOTS, volumeSnapshot('snap', 'data'));
    const failed = await waitFor(
      () => snapshot()?.status?.error && snapshot(),
      'snapshot error',
    );
    expect(failed.status.readyToUse).toBe(false);
    expect(failed.status.error.message).toMatch(
      /^Failed to check and update snapshot content: failed to take snapshot of the volume vol-[0-9a-f]+: "rpc error: code = Internal desc = quota exceeded"$/,
    );
    expect(content(failed)!.status.error.message).toBe(
      failed.status.error.message,
    );
    expect(
      eventsAbout(h.store, failed).find(e => e.type === 'Warning'),
    ).toMatchObject({
      reason: 'SnapshotCreationFailed',
      message: failed.status.error.message,
    });
    await sleep(20);
    expect(snapshot()!.status.readyToUse).toBe(false);
    expect(claim()!.metadata.finalizers).toContain(PVC_AS_SOURCE_PROTECTION);

    // the rule is spent: the next snapshot of the claim succeeds
    h.store.create(SNAPSHOTS, volumeSnapshot('again', 'data'));
    await waitFor(() => snapshot('again')?.status?.readyToUse, 'again ready');
    // the failed one still holds the claim
    expect(claim()!.metadata.finalizers).toContain(PVC_AS_SOURCE_PROTECTION);
    h.store.delete(SNAPSHOTS, 'default', 'snap');
    await waitFor(() => !snapshot('snap'), 'failed snapshot gone');
    await waitFor(
      () => !claim()!.metadata.finalizers!.includes(PVC_AS_SOURCE_PROTECTION),
      'claim released',
    );
  });

  it('refuses a claim that is being deleted, as the real controller does', async () => {
    start();
    h.store.create(SNAPSHOT_CLASSES, snapshotClass('csi'));
    const source = await boundClaim();
    h.store.update(CLAIMS, {
      ...source,
      metadata: {
        ...source.metadata,
        finalizers: [...source.metadata.finalizers!, 'example.com/hold'],
      },
    });
    h.store.delete(CLAIMS, 'default', 'data');
    h.store.create(SNAPSHOTS, volumeSnapshot('snap', 'data'));
    const failed = await waitFor(
      () => snapshot()?.status?.error && snapshot(),
      'error',
    );
    expect(failed.status).toEqual({
      readyToUse: false,
      error: {
        message:
          'Failed to create snapshot content with error snapshot controller failed to update data on API server: cannot add finalizer on claim because it is being deleted',
        time: expect.any(String),
      },
    });
    expect(h.store.list(CONTENTS).items).toEqual([]);
    expect(claim()!.metadata.finalizers).toEqual(['example.com/hold']);
  });

  it('needs exactly one default class for the driver, unless the snapshot names one', async () => {
    start();
    await boundClaim();
    h.store.create(
      SNAPSHOT_CLASSES,
      snapshotClass(
        'other-driver',
        'Delete',
        undefined,
        'pd.csi.storage.gke.io',
      ),
    );
    h.store.create(SNAPSHOTS, volumeSnapshot('snap', 'data'));
    await waitFor(
      () =>
        snapshot()?.status?.error?.message ===
        'Failed to set default snapshot class with error cannot find default snapshot class',
      'no default',
    );
    h.store.create(SNAPSHOT_CLASSES, snapshotClass('one'));
    h.store.create(SNAPSHOT_CLASSES, snapshotClass('two'));
    await waitFor(
      () =>
        snapshot()?.status?.error?.message ===
        'Failed to set default snapshot class with error 2 default snapshot classes were found',
      'two defaults',
    );
    h.store.create(
      SNAPSHOTS,
      volumeSnapshot('named', 'data', { className: 'two' }),
    );
    await waitFor(() => snapshot('named')?.status?.readyToUse, 'named ready');
    expect(snapshot('named')!.spec.volumeSnapshotClassName).toBe('two');
  });

  it('deletes the content with deletionPolicy Delete and keeps it with Retain', async () => {
    start();
    h.store.create(SNAPSHOT_CLASSES, snapshotClass('delete'));
    h.store.create(SNAPSHOT_CLASSES, snapshotClass('retain', 'Retain', {}));
    await boundClaim();
    h.store.create(
      SNAPSHOTS,
      volumeSnapshot('d', 'data', { className: 'delete' }),
    );
    h.store.create(
      SNAPSHOTS,
      volumeSnapshot('r', 'data', { className: 'retain' }),
    );
    const d = await waitFor(
      () => snapshot('d')?.status?.readyToUse && snapshot('d'),
      'd',
    );
    const r = await waitFor(
      () => snapshot('r')?.status?.readyToUse && snapshot('r'),
      'r',
    );
    h.store.delete(SNAPSHOTS, 'default', 'd');
    h.store.delete(SNAPSHOTS, 'default', 'r');
    await waitFor(() => !snapshot('d') && !snapshot('r'), 'snapshots gone');
    await waitFor(() => !content(d), 'Delete content gone');
    await sleep(20);
    const kept = content(r)!;
    expect(kept.spec.deletionPolicy).toBe('Retain');
    expect(kept.status.readyToUse).toBe(true);
    expect(kept.spec.volumeSnapshotRef.uid).toBe(r.metadata.uid);
    // deleting the retained content by hand leaves the physical snapshot alone and the object goes
    h.store.delete(CONTENTS, undefined, kept.metadata.name);
    await waitFor(() => !content(r), 'retained content deleted');
  });

  it('says a snapshot whose content was deleted by hand is no longer ready', async () => {
    start();
    h.store.create(SNAPSHOT_CLASSES, snapshotClass('csi'));
    await boundClaim();
    h.store.create(SNAPSHOTS, volumeSnapshot('snap', 'data'));
    const ready = await waitFor(
      () => snapshot()?.status?.readyToUse && snapshot(),
      'ready',
    );
    h.store.delete(
      CONTENTS,
      undefined,
      ready.status.boundVolumeSnapshotContentName,
    );
    const broken = await waitFor(
      () => snapshot()?.status?.error && snapshot(),
      'error',
    );
    expect(broken.status).toMatchObject({
      readyToUse: false,
      error: { message: 'VolumeSnapshotContent is missing' },
    });
  });
  it('keeps a snapshot a Pending claim restores from, and carries the data origin through a restore of a restore', async () => {
    start();
    h.store.create(SNAPSHOT_CLASSES, snapshotClass('csi'));
    const first = await boundClaim('data', '2Gi');
    h.store.create(SNAPSHOTS, volumeSnapshot('snap', 'data'));
    await waitFor(() => snapshot()?.status?.readyToUse, 'ready');
    const from = (name: string) => ({
      apiGroup: 'snapshot.storage.k8s.io',
      kind: 'VolumeSnapshot',
      name,
    });
    h.store.create(
      CLAIMS,
      pvc('too-small', {
        dataSource: from('snap'),
        resources: { requests: { storage: '1Gi' } },
      }),
    );
    await sleep(20);
    h.store.delete(SNAPSHOTS, 'default', 'snap');
    await sleep(20);
    expect(snapshot()!.metadata.finalizers).toContain(
      'snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection',
    );
    expect(
      eventsAbout(h.store, snapshot()!).find(
        e => e.reason === 'SnapshotDeletePending',
      ),
    ).toMatchObject({ message: 'Snapshot is being used to restore a PVC' });
    h.store.delete(CLAIMS, 'default', 'too-small');
    await waitFor(
      () => !snapshot(),
      'snapshot gone once no claim restores from it',
    );

    h.store.create(SNAPSHOTS, volumeSnapshot('second', 'data'));
    await waitFor(() => snapshot('second')?.status?.readyToUse, 'second ready');
    h.store.create(
      CLAIMS,
      pvc('copy', {
        dataSource: from('second'),
        resources: { requests: { storage: '2Gi' } },
      }),
    );
    const copy = await waitFor(
      () => claim('copy')?.status?.phase === 'Bound' && claim('copy'),
      'copy bound',
    );
    h.store.create(SNAPSHOTS, volumeSnapshot('of-copy', 'copy'));
    await waitFor(
      () => snapshot('of-copy')?.status?.readyToUse,
      'of-copy ready',
    );
    h.store.create(
      CLAIMS,
      pvc('copy-of-copy', {
        dataSource: from('of-copy'),
        resources: { requests: { storage: '2Gi' } },
      }),
    );
    const last = await waitFor(
      () =>
        claim('copy-of-copy')?.status?.phase === 'Bound' &&
        claim('copy-of-copy'),
      'copy of copy bound',
    );
    expect(
      h.store.get(VOLUMES, undefined, last.spec.volumeName)!.metadata
        .annotations,
    ).toMatchObject({
      'kube-sim.io/restored-from-volume': copy.spec.volumeName,
      'kube-sim.io/restored-from-claim-uid': copy.metadata.uid,
      'kube-sim.io/data-origin-volume': first.spec.volumeName,
    });
  });
  it('binds a snapshot to a pre-provisioned content that names it, and refuses one that names another', async () => {
    start();
    const preProvisioned = (name: string, snapshotName: string) =>
      manifest({
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshotContent',
        metadata: { name },
        spec: {
          deletionPolicy: 'Retain',
          driver: 'ebs.csi.aws.com',
          source: { snapshotHandle: 'snap-0123456789abcdef' },
          volumeSnapshotRef: { namespace: 'default', name: snapshotName },
        },
      });
    const fromContent = (name: string, contentName: string) =>
      manifest({
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshot',
        metadata: { name, namespace: 'default' },
        spec: { source: { volumeSnapshotContentName: contentName } },
      });
    h.store.create(CONTENTS, preProvisioned('imported', 'restored'));
    const created = h.store.create(
      SNAPSHOTS,
      fromContent('restored', 'imported'),
    );
    const ready = await waitFor(
      () => snapshot('restored')?.status?.readyToUse && snapshot('restored'),
      'imported snapshot ready',
    );
    expect(ready.status.boundVolumeSnapshotContentName).toBe('imported');
    const imported = h.store.get(CONTENTS, undefined, 'imported')!;
    expect(imported.spec.volumeSnapshotRef.uid).toBe(created.metadata.uid);
    expect(imported.status).toEqual({
      snapshotHandle: 'snap-0123456789abcdef',
      readyToUse: true,
    });

    h.store.create(SNAPSHOTS, fromContent('thief', 'imported'));
    await waitFor(
      () =>
        snapshot('thief')?.status?.error?.message ===
        'VolumeSnapshotContent imported is bound to another snapshot (default/restored)',
      'refused',
    );
    expect(snapshot('thief')!.status.readyToUse).toBe(false);
  });
  it('brings a pruned claim back: snapshot, delete, restore under its name, and a scale-up mounts it', async () => {
    start();
    h.store.create(SNAPSHOT_CLASSES, snapshotClass('csi'));
    const SETS = 'apps/statefulsets';
    h.store.create(SETS, statefulSet('web', { replicas: 3 }));
    const running = (name: string) =>
      h.store.get('pods', 'default', name)?.status?.phase === 'Running';
    await waitFor(() => running('web-2'), 'web-2 running');
    updateSpec(h.store, SETS, 'web', spec => {
      spec.replicas = 2;
    });
    await waitFor(() => !h.store.get('pods', 'default', 'web-2'), 'web-2 gone');
    const original = claim('data-web-2')!;
    h.store.create(SNAPSHOTS, volumeSnapshot('keep', 'data-web-2'));
    await waitFor(() => snapshot('keep')?.status?.readyToUse, 'ready');
    h.store.delete(CLAIMS, 'default', 'data-web-2');
    await waitFor(() => !claim('data-web-2'), 'claim pruned');

    h.store.create(
      CLAIMS,
      pvc(
        'data-web-2',
        {
          dataSource: {
            apiGroup: 'snapshot.storage.k8s.io',
            kind: 'VolumeSnapshot',
            name: 'keep',
          },
          resources: {
            requests: { storage: snapshot('keep')!.status.restoreSize },
          },
        },
        'default',
        original.metadata.labels,
      ),
    );
    const restored = await waitFor(
      () =>
        claim('data-web-2')?.status?.phase === 'Bound' && claim('data-web-2'),
      'restored',
    );
    updateSpec(h.store, SETS, 'web', spec => {
      spec.replicas = 3;
    });
    await waitFor(() => running('web-2'), 'web-2 running again');
    const pod = h.store.get('pods', 'default', 'web-2')!;
    expect(
      pod.spec.volumes.find((v: any) => v.name === 'data').persistentVolumeClaim
        .claimName,
    ).toBe('data-web-2');
    expect(claim('data-web-2')!.metadata.uid).toBe(restored.metadata.uid);
    expect(
      h.store.get(VOLUMES, undefined, restored.spec.volumeName)!.metadata
        .annotations,
    ).toMatchObject({
      'kube-sim.io/restored-from-snapshot': 'default/keep',
      'kube-sim.io/restored-from-claim-uid': original.metadata.uid,
      'kube-sim.io/data-origin-volume': original.spec.volumeName,
    });
  });
});
