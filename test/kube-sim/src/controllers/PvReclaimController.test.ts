import {
  eventsAbout,
  Harness,
  manifest,
  pvc,
  sleep,
  startHarness,
  storageClass,
  waitFor,
} from './testUtils';

const CLAIMS = 'persistentvolumeclaims';
const VOLUMES = 'persistentvolumes';

describe('PvReclaimController and PvProtectionController', () => {
  let h: Harness;
  afterEach(() => h.stop());
  const boundVolume = async (storageClassName = 'standard') => {
    h.store.create(CLAIMS, pvc('data', { storageClassName }));
    const claim = await waitFor(() => {
      const c = h.store.get(CLAIMS, 'default', 'data');
      return c?.status.phase === 'Bound' && c;
    }, 'claim bound');
    return claim.spec.volumeName as string;
  };
  const volume = (name: string) => h.store.get(VOLUMES, undefined, name);
  const phases = (name: string) =>
    h.log
      .filter(e => e.resource === VOLUMES && e.object.metadata.name === name)
      .map(e => e.object.status?.phase)
      .filter((p, i, all) => p !== all[i - 1]);

  it('deletes a Released volume whose policy is Delete', async () => {
    h = startHarness({ reclaimSeconds: 30 });
    const name = await boundVolume();
    h.store.delete(CLAIMS, 'default', 'data');
    await waitFor(() => volume(name)?.status.phase === 'Released', 'released');
    expect(volume(name)!.metadata.deletionTimestamp).toBeUndefined();
    await waitFor(() => !volume(name), 'volume deleted');
    expect(phases(name)).toEqual(['Pending', 'Bound', 'Released']);
  });

  it('keeps a Released volume whose policy is Retain, with its claimRef', async () => {
    h = startHarness();
    h.store.create(
      'storage.k8s.io/storageclasses',
      storageClass('keep', {
        provisioner: 'ebs.csi.aws.com',
        reclaimPolicy: 'Retain',
      }),
    );
    const name = await boundVolume('keep');
    const uid = h.store.get(CLAIMS, 'default', 'data')!.metadata.uid;
    h.store.delete(CLAIMS, 'default', 'data');
    await waitFor(() => volume(name)?.status.phase === 'Released', 'released');
    await sleep(30);
    expect(volume(name)!.status.phase).toBe('Released');
    expect(volume(name)!.spec.claimRef).toMatchObject({ name: 'data', uid });
    expect(volume(name)!.metadata.deletionTimestamp).toBeUndefined();

    // A new claim of the same name gets a new volume; the released one is not reused.
    await boundVolume('keep');
    expect(h.store.get(CLAIMS, 'default', 'data')!.spec.volumeName).not.toBe(
      name,
    );
    expect(volume(name)!.status.phase).toBe('Released');
  });

  it('keeps a deleted volume while it is Bound, and lets it go once Released', async () => {
    h = startHarness({ reclaimSeconds: 1000 });
    const name = await boundVolume();
    h.store.delete(VOLUMES, undefined, name);
    await sleep(20);
    expect(volume(name)!.metadata.deletionTimestamp).toBeDefined();
    expect(volume(name)!.metadata.finalizers).toContain(
      'kubernetes.io/pv-protection',
    );
    expect(h.store.get(CLAIMS, 'default', 'data')!.status.phase).toBe('Bound');

    h.store.delete(CLAIMS, 'default', 'data');
    await waitFor(
      () =>
        !volume(name)?.metadata.finalizers?.includes(
          'kubernetes.io/pv-protection',
        ),
      'protection lifted',
    );
    // The provisioner's finalizer holds it until the disk is deleted.
    expect(volume(name)!.metadata.finalizers).toEqual([
      'external-provisioner.volume.kubernetes.io/finalizer',
    ]);
    await waitFor(() => !volume(name), 'volume gone', 5000);
  });

  it('fails to reclaim a Delete volume no provisioner made', async () => {
    h = startHarness();
    h.store.create(
      VOLUMES,
      manifest({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'manual' },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          hostPath: { path: '/data' },
          persistentVolumeReclaimPolicy: 'Delete',
        },
      }),
    );
    await boundVolume('');
    h.store.delete(CLAIMS, 'default', 'data');
    await waitFor(() => volume('manual')?.status.phase === 'Failed', 'failed');
    expect(volume('manual')!.status.message).toBe(
      'error getting deleter volume plugin for volume "manual": no deletable volume plugin matched',
    );
  });
  describe('a reclaim policy changed by a client', () => {
    const PROVISIONER_FINALIZER =
      'external-provisioner.volume.kubernetes.io/finalizer';
    const retainClass = () =>
      h.store.create(
        'storage.k8s.io/storageclasses',
        storageClass('keep', {
          provisioner: 'ebs.csi.aws.com',
          reclaimPolicy: 'Retain',
        }),
      );
    /** What `kubectl patch pv NAME -p '{"spec":{"persistentVolumeReclaimPolicy":…}}'` does. */
    const setPolicy = (name: string, policy: string) => {
      const copy = structuredClone(volume(name)!);
      copy.spec.persistentVolumeReclaimPolicy = policy;
      return h.store.update(VOLUMES, copy);
    };
    const released = async () => {
      const name = await boundVolume('keep');
      h.store.delete(CLAIMS, 'default', 'data');
      await waitFor(
        () => volume(name)?.status.phase === 'Released',
        'released',
      );
      return name;
    };

    it('deletes a Released volume whose policy goes from Retain to Delete, after the delay', async () => {
      h = startHarness({ reclaimSeconds: 30 });
      retainClass();
      const name = await released();
      await sleep(60);
      expect(volume(name)).toBeDefined();
      const { uid } = volume(name)!.metadata;

      setPolicy(name, 'Delete');
      // The provisioner adds its finalizer to Bound volumes only: this one is deleted without it.
      expect(volume(name)!.metadata.finalizers).toEqual([
        'kubernetes.io/pv-protection',
      ]);
      await waitFor(() => !volume(name), 'volume deleted');
      expect(phases(name)).toEqual(['Pending', 'Bound', 'Released']);
      const marked = h.log.find(
        e =>
          e.resource === VOLUMES &&
          e.object.metadata.uid === uid &&
          e.object.metadata.deletionTimestamp,
      )!;
      expect(marked.previous!.spec.persistentVolumeReclaimPolicy).toBe(
        'Delete',
      );
      expect(marked.previous!.status.phase).toBe('Released');
    });

    it('leaves a Bound volume patched to Delete to its claim, with the provisioner finalizer, and deletes it once released', async () => {
      h = startHarness({ reclaimSeconds: 30 });
      retainClass();
      const name = await boundVolume('keep');
      expect(volume(name)!.metadata.finalizers).toEqual([
        'kubernetes.io/pv-protection',
      ]);
      setPolicy(name, 'Delete');
      await waitFor(
        () =>
          volume(name)?.metadata.finalizers?.includes(PROVISIONER_FINALIZER),
        'provisioner finalizer',
      );
      await sleep(60);
      expect(volume(name)!.status.phase).toBe('Bound');
      expect(volume(name)!.metadata.deletionTimestamp).toBeUndefined();

      h.store.delete(CLAIMS, 'default', 'data');
      await waitFor(() => !volume(name), 'volume deleted');
    });

    it('keeps a Released volume whose policy goes back to Retain before the provisioner deletes it, and drops the finalizer', async () => {
      h = startHarness({ reclaimSeconds: 50 });
      const name = await boundVolume();
      expect(volume(name)!.metadata.finalizers).toContain(
        PROVISIONER_FINALIZER,
      );
      h.store.delete(CLAIMS, 'default', 'data');
      await waitFor(
        () => volume(name)?.status.phase === 'Released',
        'released',
      );
      setPolicy(name, 'Retain');
      await waitFor(
        () =>
          !volume(name)?.metadata.finalizers?.includes(PROVISIONER_FINALIZER),
        'finalizer removed',
      );
      await sleep(120);
      expect(volume(name)!.status.phase).toBe('Released');
      expect(volume(name)!.metadata.deletionTimestamp).toBeUndefined();
    });

    it('fails, and keeps, a static Released volume patched to Delete', async () => {
      h = startHarness({ reclaimSeconds: 1 });
      h.store.create(
        VOLUMES,
        manifest({
          apiVersion: 'v1',
          kind: 'PersistentVolume',
          metadata: { name: 'manual' },
          spec: {
            capacity: { storage: '1Gi' },
            accessModes: ['ReadWriteOnce'],
            csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0123' },
            persistentVolumeReclaimPolicy: 'Retain',
          },
        }),
      );
      await boundVolume('');
      h.store.delete(CLAIMS, 'default', 'data');
      await waitFor(
        () => volume('manual')?.status.phase === 'Released',
        'released',
      );
      setPolicy('manual', 'Delete');
      await waitFor(
        () => volume('manual')?.status.phase === 'Failed',
        'failed',
      );
      const message =
        'error getting deleter volume plugin for volume "manual": no deletable volume plugin matched';
      expect(volume('manual')!.status.message).toBe(message);
      expect(eventsAbout(h.store, volume('manual')!)).toEqual([
        {
          type: 'Warning',
          reason: 'VolumeFailedDelete',
          from: 'persistentvolume-controller',
          message,
        },
      ]);
      await sleep(30);
      expect(volume('manual')!.status.phase).toBe('Failed');
      expect(volume('manual')!.metadata.deletionTimestamp).toBeUndefined();
      expect(volume('manual')!.metadata.finalizers).toEqual([
        'kubernetes.io/pv-protection',
      ]);
    });
  });
});
