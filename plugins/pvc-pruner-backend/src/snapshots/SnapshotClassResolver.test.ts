import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
} from '@kubernetes/client-node';
import { ClusterRequestError, VolumeSnapshotClass } from '../kubernetes';
import {
  DEFAULT_CLASS_ANNOTATION,
  SnapshotClassResolver,
} from './SnapshotClassResolver';

const snapshotClass = (
  name: string,
  driver: string,
  isDefault = false,
): VolumeSnapshotClass => ({
  metadata: {
    name,
    ...(isDefault
      ? { annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } }
      : {}),
  },
  driver,
  deletionPolicy: 'Delete',
});

function resolver(
  classes: VolumeSnapshotClass[],
  options: {
    storageClasses?: V1StorageClass[];
    mapped?: Record<string, string>;
  } = {},
) {
  const reads = {
    listVolumeSnapshotClasses: jest.fn(async () => classes),
    readStorageClass: jest.fn(async (name: string) =>
      options.storageClasses?.find(sc => sc.metadata?.name === name),
    ),
  };
  return {
    reads,
    resolver: new SnapshotClassResolver(
      reads,
      new Map(Object.entries(options.mapped ?? {})),
    ),
  };
}

const claim = (storageClassName?: string): V1PersistentVolumeClaim => ({
  metadata: { name: 'data-web-3', namespace: 'shop', uid: 'u3' },
  spec: { storageClassName, volumeName: 'pv-3' },
});

const csiVolume = (
  driver: string | undefined,
  reclaimPolicy = 'Delete',
): V1PersistentVolume => ({
  metadata: { name: 'pv-3' },
  spec: {
    persistentVolumeReclaimPolicy: reclaimPolicy,
    claimRef: { namespace: 'shop', name: 'data-web-3', uid: 'u3' },
    ...(driver !== undefined ? { csi: { driver, volumeHandle: 'h-3' } } : {}),
  },
});

describe('SnapshotClassResolver', () => {
  it("uses the class marked default for the volume's CSI driver", async () => {
    const { resolver: r } = resolver([
      snapshotClass('ebs-slow', 'ebs.csi.aws.com'),
      snapshotClass('ebs-default', 'ebs.csi.aws.com', true),
      snapshotClass('pd-default', 'pd.csi.storage.gke.io', true),
    ]);

    await expect(
      r.resolve(claim('gp3'), csiVolume('ebs.csi.aws.com')),
    ).resolves.toEqual({
      kind: 'class',
      name: 'ebs-default',
      driver: 'ebs.csi.aws.com',
    });
  });

  it("takes the driver from the StorageClass's provisioner when the volume does not name one", async () => {
    const { resolver: r } = resolver(
      [snapshotClass('pd-default', 'pd.csi.storage.gke.io', true)],
      {
        storageClasses: [
          {
            metadata: { name: 'standard-rwo' },
            provisioner: 'pd.csi.storage.gke.io',
          },
        ],
      },
    );

    await expect(
      r.resolve(claim('standard-rwo'), undefined),
    ).resolves.toMatchObject({ kind: 'class', name: 'pd-default' });
  });

  it('refuses two defaults for one driver, naming both', async () => {
    const { resolver: r } = resolver([
      snapshotClass('ebs-a', 'ebs.csi.aws.com', true),
      snapshotClass('ebs-b', 'ebs.csi.aws.com', true),
    ]);

    const choice = await r.resolve(claim('gp3'), csiVolume('ebs.csi.aws.com'));

    expect(choice.kind).toBe('error');
    expect(choice).toMatchObject({
      reason: expect.stringContaining(
        '2 VolumeSnapshotClasses are marked default for CSI driver ebs.csi.aws.com: ebs-a and ebs-b',
      ),
    });
  });

  it('prefers the configured class of the StorageClass over any default', async () => {
    const { resolver: r } = resolver(
      [
        snapshotClass('ebs-a', 'ebs.csi.aws.com', true),
        snapshotClass('ebs-b', 'ebs.csi.aws.com', true),
        snapshotClass('ebs-hourly', 'ebs.csi.aws.com'),
      ],
      { mapped: { gp3: 'ebs-hourly' } },
    );

    await expect(
      r.resolve(claim('gp3'), csiVolume('ebs.csi.aws.com')),
    ).resolves.toEqual({
      kind: 'class',
      name: 'ebs-hourly',
      driver: 'ebs.csi.aws.com',
    });
  });

  it('refuses a configured class that does not exist, or is for another driver', async () => {
    const { resolver: r } = resolver(
      [snapshotClass('pd-snaps', 'pd.csi.storage.gke.io')],
      { mapped: { gp3: 'ebs-hourly', fast: 'pd-snaps' } },
    );

    await expect(
      r.resolve(claim('gp3'), csiVolume('ebs.csi.aws.com')),
    ).resolves.toEqual({
      kind: 'error',
      reason:
        'VolumeSnapshotClass ebs-hourly (pvcPruner.snapshots.storageClasses.gp3) does not exist in the cluster',
    });
    await expect(
      r.resolve(claim('fast'), csiVolume('ebs.csi.aws.com')),
    ).resolves.toEqual({
      kind: 'error',
      reason:
        "VolumeSnapshotClass pd-snaps (pvcPruner.snapshots.storageClasses.fast) is for CSI driver pd.csi.storage.gke.io, but the volume's driver is ebs.csi.aws.com",
    });
  });

  it('gives a reason when no class fits: no default for the driver, or not a CSI volume', async () => {
    const { resolver: r } = resolver([
      snapshotClass('pd-default', 'pd.csi.storage.gke.io', true),
    ]);

    await expect(
      r.resolve(claim('gp3'), csiVolume('ebs.csi.aws.com')),
    ).resolves.toEqual({
      kind: 'none',
      reason: `no VolumeSnapshotClass is marked default for CSI driver ebs.csi.aws.com (annotate one ${DEFAULT_CLASS_ANNOTATION}: "true", or map StorageClass gp3 in pvcPruner.snapshots.storageClasses)`,
    });
    await expect(
      r.resolve(claim('local'), csiVolume(undefined)),
    ).resolves.toMatchObject({
      kind: 'none',
      reason: expect.stringContaining('its volume is not a CSI volume'),
    });
  });

  it('needs no snapshot of a Retain volume, which survives its claim', async () => {
    const { resolver: r, reads } = resolver([]);

    await expect(
      r.resolve(claim('gp3'), csiVolume('ebs.csi.aws.com', 'Retain')),
    ).resolves.toMatchObject({
      kind: 'not-needed',
      reason: expect.stringContaining('reclaim policy Retain'),
    });
    expect(reads.listVolumeSnapshotClasses).not.toHaveBeenCalled();
  });

  it('takes a Retain volume bound to another claim (claimRef.uid) for one that does not survive this claim', async () => {
    const { resolver: r } = resolver([]);
    const volume = csiVolume('ebs.csi.aws.com', 'Retain');
    volume.spec!.claimRef!.uid = 'someone-elses';

    await expect(r.resolve(claim('gp3'), volume)).resolves.not.toMatchObject({
      kind: 'not-needed',
    });
  });

  it('has no class where the cluster has no snapshot API (the CRDs are not installed), and says what to install', async () => {
    const { resolver: r, reads } = resolver([]);
    reads.listVolumeSnapshotClasses.mockRejectedValue(
      new ClusterRequestError('demo', 'not found', 404, 'NotFound'),
    );

    await expect(
      r.resolve(claim('gp3'), csiVolume('ebs.csi.aws.com')),
    ).resolves.toEqual({
      kind: 'none',
      reason: expect.stringContaining('install the external-snapshotter'),
    });
  });

  it('lists the classes once per job, and again after a failed list', async () => {
    const { resolver: r, reads } = resolver([
      snapshotClass('ebs-default', 'ebs.csi.aws.com', true),
    ]);
    reads.listVolumeSnapshotClasses.mockRejectedValueOnce(new Error('down'));

    await expect(
      r.resolve(claim('gp3'), csiVolume('ebs.csi.aws.com')),
    ).rejects.toThrow('down');
    await r.resolve(claim('gp3'), csiVolume('ebs.csi.aws.com'));
    await r.resolve(claim('gp3'), csiVolume('ebs.csi.aws.com'));

    expect(reads.listVolumeSnapshotClasses).toHaveBeenCalledTimes(2);
  });
});
