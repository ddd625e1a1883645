import {
  eventsAbout,
  Harness,
  manifest,
  pod,
  pvc,
  sleep,
  startHarness,
  storageClass,
  waitFor,
} from './testUtils';

const CLAIMS = 'persistentvolumeclaims';
const VOLUMES = 'persistentvolumes';

describe('ProvisioningController', () => {
  let h: Harness;
  afterEach(() => h.stop());
  const claim = (name = 'data') => h.store.get(CLAIMS, 'default', name)!;
  const volume = (name: string) => h.store.get(VOLUMES, undefined, name)!;
  const staticVolume = (name: string, spec: Record<string, unknown> = {}) =>
    h.store.create(
      VOLUMES,
      manifest({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          hostPath: { path: `/data/${name}` },
          ...spec,
        },
      }),
    );

  it('records the persistentvolume-controller and external provisioner events kubectl describe pvc shows', async () => {
    h = startHarness();
    const created = h.store.create(CLAIMS, pvc('data'));
    await waitFor(() => claim().status?.phase === 'Bound', 'claim bound');
    expect(eventsAbout(h.store, created)).toEqual([
      {
        type: 'Normal',
        reason: 'ExternalProvisioning',
        from: 'persistentvolume-controller',
        message:
          "Waiting for a volume to be created either by the external provisioner 'ebs.csi.aws.com' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
      },
      {
        type: 'Normal',
        reason: 'Provisioning',
        from: expect.stringMatching(
          /^ebs\.csi\.aws\.com_sim-node-1_[0-9a-f-]{36}$/,
        ),
        message:
          'External provisioner is provisioning volume for claim "default/data"',
      },
      {
        type: 'Normal',
        reason: 'ProvisioningSucceeded',
        from: expect.stringMatching(/^ebs\.csi\.aws\.com_/),
        message: `Successfully provisioned volume pvc-${created.metadata.uid}`,
      },
    ]);
  });

  it('records why a claim waits: no class, a missing class, or a first consumer', async () => {
    h = startHarness();
    h.store.create(
      'storage.k8s.io/storageclasses',
      storageClass('late', {
        provisioner: 'ebs.csi.aws.com',
        volumeBindingMode: 'WaitForFirstConsumer',
      }),
    );
    const none = h.store.create(CLAIMS, pvc('none', { storageClassName: '' }));
    const missing = h.store.create(
      CLAIMS,
      pvc('missing', { storageClassName: 'gold' }),
    );
    const late = h.store.create(
      CLAIMS,
      pvc('late', { storageClassName: 'late' }),
    );
    const reasons = (c: typeof none) =>
      eventsAbout(h.store, c).map(e => `${e.type} ${e.reason}: ${e.message}`);
    await waitFor(
      () => [none, missing, late].every(c => reasons(c).length > 0),
      'events',
    );
    expect(reasons(none)).toEqual([
      'Normal FailedBinding: no persistent volumes available for this claim and no storage class is set',
    ]);
    expect(reasons(missing)).toEqual([
      'Warning ProvisioningFailed: storageclass.storage.k8s.io "gold" not found',
    ]);
    expect(reasons(late)).toEqual([
      'Normal WaitForFirstConsumer: waiting for first consumer to be created before binding',
    ]);
  });

  it('provisions pvc-<uid> from the default class and binds both ways', async () => {
    h = startHarness();
    const created = h.store.create(
      CLAIMS,
      pvc('data', { resources: { requests: { storage: '3Gi' } } }),
    );
    const bound = await waitFor(
      () => claim().status.phase === 'Bound' && claim(),
      'claim bound',
    );
    const name = `pvc-${created.metadata.uid}`;
    expect(bound.spec.volumeName).toBe(name);
    expect(bound.metadata.annotations).toEqual({
      'pv.kubernetes.io/bind-completed': 'yes',
      'pv.kubernetes.io/bound-by-controller': 'yes',
      'volume.beta.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com',
      'volume.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com',
    });
    expect(bound.status).toEqual({
      phase: 'Bound',
      accessModes: ['ReadWriteOnce'],
      capacity: { storage: '3Gi' },
    });

    const pv = volume(name);
    expect(pv.metadata.annotations).toEqual({
      'pv.kubernetes.io/provisioned-by': 'ebs.csi.aws.com',
    });
    expect(pv.metadata.finalizers).toEqual([
      'external-provisioner.volume.kubernetes.io/finalizer',
      'kubernetes.io/pv-protection',
    ]);
    expect(pv.spec).toMatchObject({
      capacity: { storage: '3Gi' },
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'standard',
      persistentVolumeReclaimPolicy: 'Delete',
      volumeMode: 'Filesystem',
      claimRef: {
        kind: 'PersistentVolumeClaim',
        apiVersion: 'v1',
        namespace: 'default',
        name: 'data',
        uid: created.metadata.uid,
        resourceVersion: expect.any(String),
      },
      csi: {
        driver: 'ebs.csi.aws.com',
        volumeHandle: expect.stringMatching(/^vol-/),
        fsType: 'ext4',
      },
    });
    expect(pv.status.phase).toBe('Bound');
  });

  it('leaves a claim without a class Pending until a matching volume exists, then binds the smallest fit', async () => {
    h = startHarness();
    h.store.create(CLAIMS, pvc('data', { storageClassName: '' }));
    staticVolume('too-small', { capacity: { storage: '500Mi' } });
    staticVolume('classy', { storageClassName: 'standard' });
    await sleep(30);
    expect(claim().status.phase).toBe('Pending');
    expect(
      h.store
        .list(VOLUMES)
        .items.map(v => v.metadata.name)
        .sort(),
    ).toEqual(['classy', 'too-small']);

    staticVolume('big', { capacity: { storage: '10Gi' } });
    staticVolume('fits', { capacity: { storage: '2Gi' } });
    await waitFor(() => claim().status.phase === 'Bound', 'claim bound');
    expect(claim().spec.volumeName).toBe('fits');
    expect(volume('fits').metadata.annotations).toEqual({
      'pv.kubernetes.io/bound-by-controller': 'yes',
    });
    expect(volume('fits').spec.claimRef).toMatchObject({
      name: 'data',
      namespace: 'default',
      uid: claim().metadata.uid,
    });
    expect(volume('big').status.phase).toBe('Available');
  });

  it('binds a claim to the volume pre-bound to it', async () => {
    h = startHarness();
    staticVolume('reserved', {
      storageClassName: 'standard',
      claimRef: { namespace: 'default', name: 'data' },
    });
    staticVolume('other', { storageClassName: 'standard' });
    await waitFor(
      () =>
        volume('other').status.phase === 'Available' &&
        volume('reserved').status.phase === 'Available',
      'volumes available',
    );
    h.store.create(CLAIMS, pvc('data'));
    await waitFor(() => claim().status.phase === 'Bound', 'claim bound');
    expect(claim().spec.volumeName).toBe('reserved');
    expect(volume('reserved').metadata.annotations).toBeUndefined();
    expect(volume('reserved').spec.claimRef.uid).toBe(claim().metadata.uid);
    expect(h.store.list(VOLUMES).items).toHaveLength(2);
  });

  it('waits for a consumer with WaitForFirstConsumer', async () => {
    h = startHarness();
    h.store.create(
      'storage.k8s.io/storageclasses',
      storageClass('local', {
        provisioner: 'rancher.io/local-path',
        reclaimPolicy: 'Retain',
        volumeBindingMode: 'WaitForFirstConsumer',
      }),
    );
    h.store.create(CLAIMS, pvc('data', { storageClassName: 'local' }));
    await sleep(30);
    expect(claim().status.phase).toBe('Pending');
    expect(h.store.list(VOLUMES).items).toHaveLength(0);

    h.store.create('pods', pod('app', ['data']));
    await waitFor(
      () => h.store.get('pods', 'default', 'app')?.status.phase === 'Running',
      'pod running',
    );
    expect(
      claim().metadata.annotations!['volume.kubernetes.io/selected-node'],
    ).toBe('sim-node-1');
    const pv = volume(claim().spec.volumeName);
    expect(pv.spec.hostPath.path).toBe(
      '/tmp/hostpath-provisioner/default/data',
    );
    expect(pv.spec.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(pv.metadata.finalizers).toEqual(['kubernetes.io/pv-protection']);
  });
});
