import { TEST_SEAL } from '../__testUtils__/testSeal';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { FakeSnapshotter } from '../__testUtils__/fakeSnapshotter';
import { ClusterRequestError } from '../kubernetes';
import { SNAPSHOT_ANNOTATIONS, SNAPSHOT_LABELS } from './snapshotMetadata';
import {
  SnapshotOrder,
  SnapshotTaker,
  SOURCE_PROTECTION_FINALIZER,
} from './SnapshotTaker';

const JOB = '3f2a9c1e-0000-4000-8000-000000000001';

const claim: V1PersistentVolumeClaim = {
  metadata: {
    name: 'data-orders-db-3',
    namespace: 'shop',
    uid: 'claim-uid-3',
    labels: { app: 'orders-db' },
  },
  spec: {
    storageClassName: 'gp3',
    accessModes: ['ReadWriteOnce'],
    resources: { requests: { storage: '10Gi' } },
    volumeName: 'pv-3',
  },
};

const order = (over: Partial<SnapshotOrder> = {}): SnapshotOrder => ({
  jobId: JOB,
  namespace: 'shop',
  dryRun: false,
  claim,
  volume: {
    metadata: { name: 'pv-3' },
    spec: {
      csi: {
        driver: 'csi.example.com',
        volumeHandle: 'handle-data-orders-db-3',
      },
    },
  },
  className: 'csi-default',
  driver: 'csi.example.com',
  statefulSet: 'orders-db',
  entityRef: 'component:default/orders',
  requestedBy: 'user:default/alice',
  ...over,
});

// Long enough that a ready snapshot is never late on a loaded machine; the timeout tests pass their own.
const taker = (timeoutMs = 5000) =>
  new SnapshotTaker({
    timeoutMs,
    retentionDays: 7,
    firstPollMs: 5,
    maxPollMs: 10,
    seal: TEST_SEAL,
  });

const running = () => new AbortController().signal;

describe('SnapshotTaker', () => {
  let fake: FakeSnapshotter;
  beforeEach(() => {
    fake = new FakeSnapshotter();
  });

  it("creates the snapshot in the claim's namespace from the claim, labelled and annotated for a restore, and waits until it is ready", async () => {
    fake.behaviour = () => ({ ready: 2, restoreSize: '10Gi' });
    const before = Date.now();

    const result = await taker().take(fake, order(), running());

    expect(result).toEqual({
      ok: true,
      name: 'data-orders-db-3-3f2a9c1e',
      uid: fake.snapshots.get('shop/data-orders-db-3-3f2a9c1e')!.metadata!.uid,
      contentName: expect.stringMatching(/^snapcontent-/),
      restoreBytes: 10 * 2 ** 30,
      expiresAt: expect.any(String),
    });
    const expiry = Date.parse((result as { expiresAt: string }).expiresAt);
    expect(expiry - before).toBeGreaterThanOrEqual(7 * 86_400_000);
    expect(expiry - Date.now()).toBeLessThanOrEqual(7 * 86_400_000);
    const stored = fake.snapshots.get('shop/data-orders-db-3-3f2a9c1e')!;
    expect(stored.spec).toEqual({
      volumeSnapshotClassName: 'csi-default',
      source: { persistentVolumeClaimName: 'data-orders-db-3' },
    });
    expect(stored.metadata?.labels).toEqual({
      [SNAPSHOT_LABELS.managedBy]: 'pvc-pruner',
      [SNAPSHOT_LABELS.job]: JOB,
      [SNAPSHOT_LABELS.claimUid]: 'claim-uid-3',
      [SNAPSHOT_LABELS.statefulSet]: 'orders-db',
      [SNAPSHOT_LABELS.entity]: expect.stringMatching(/^sha256-[0-9a-f]{56}$/),
    });
    expect(stored.metadata?.annotations).toEqual({
      [SNAPSHOT_ANNOTATIONS.claimName]: 'data-orders-db-3',
      [SNAPSHOT_ANNOTATIONS.claimLabels]: '{"app":"orders-db"}',
      [SNAPSHOT_ANNOTATIONS.storageClass]: 'gp3',
      [SNAPSHOT_ANNOTATIONS.accessModes]: '["ReadWriteOnce"]',
      [SNAPSHOT_ANNOTATIONS.requestedSize]: '10Gi',
      [SNAPSHOT_ANNOTATIONS.entityRef]: 'component:default/orders',
      [SNAPSHOT_ANNOTATIONS.requestedBy]: 'user:default/alice',
      [SNAPSHOT_ANNOTATIONS.expiresAt]: (result as { expiresAt: string })
        .expiresAt,
      [SNAPSHOT_ANNOTATIONS.seal]: expect.any(String),
    });
    // Sealed as pvc-pruner's: what the list, a restore, a keep and the expiry trust.
    expect(TEST_SEAL.isSealed(stored)).toBe(true);
    // Read until ready, then its content once.
    expect(fake.calls).toEqual([
      'create shop/data-orders-db-3-3f2a9c1e',
      'get shop/data-orders-db-3-3f2a9c1e',
      'get shop/data-orders-db-3-3f2a9c1e',
      'get shop/data-orders-db-3-3f2a9c1e',
      expect.stringMatching(/^get content snapcontent-/),
      'get claim shop/data-orders-db-3',
    ]);
  });

  it('once the snapshot is ready, waits for the snapshot controller to lift its finalizer from the claim, whose update would fail a delete checked before it', async () => {
    const held = (finalizers: string[]) => ({
      ...claim,
      metadata: { ...claim.metadata, finalizers },
    });
    fake.claimOnRead = read =>
      read < 3
        ? held(['kubernetes.io/pvc-protection', SOURCE_PROTECTION_FINALIZER])
        : held(['kubernetes.io/pvc-protection']);

    const result = await taker().take(fake, order(), running());

    expect(result.ok).toBe(true);
    expect(fake.calls.filter(c => c.startsWith('get claim'))).toHaveLength(3);
  });

  it('goes on with a ready snapshot when the finalizer is not lifted within the wait, which only delays the deletion', async () => {
    fake.claimOnRead = () => ({
      ...claim,
      metadata: {
        ...claim.metadata,
        finalizers: [SOURCE_PROTECTION_FINALIZER],
      },
    });
    const started = Date.now();

    const result = await taker(150).take(fake, order(), running());

    expect(result.ok).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('fails with the controller’s error when the snapshot reports status.error', async () => {
    fake.behaviour = () => ({
      error: 'Failed to check and update snapshot content: driver is down',
    });

    await expect(taker().take(fake, order(), running())).resolves.toEqual({
      ok: false,
      name: 'data-orders-db-3-3f2a9c1e',
      // The snapshot left in the cluster is named by its uid too.
      uid: fake.snapshots.get('shop/data-orders-db-3-3f2a9c1e')!.metadata!.uid,
      expiresAt: expect.any(String),
      reason:
        'VolumeSnapshot data-orders-db-3-3f2a9c1e failed: Failed to check and update snapshot content: driver is down',
    });
  });

  it('fails once the snapshot is not ready within the timeout, naming the setting', async () => {
    fake.behaviour = () => ({ never: true });
    const started = Date.now();

    const result = await taker(100).take(fake, order(), running());

    expect(result).toEqual({
      ok: false,
      name: 'data-orders-db-3-3f2a9c1e',
      // The snapshot left in the cluster is named by its uid too.
      uid: fake.snapshots.get('shop/data-orders-db-3-3f2a9c1e')!.metadata!.uid,
      expiresAt: expect.any(String),
      reason:
        'VolumeSnapshot data-orders-db-3-3f2a9c1e was not ready within 0.1 s (pvcPruner.snapshots.timeoutSeconds); it is left in place',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('fails at once, naming the refusal, when the cluster forbids reading the snapshot (a missing RBAC rule is not waited out)', async () => {
    const refusal =
      'cluster "demo" refused get volumesnapshot shop/data-orders-db-3-3f2a9c1e: 403 Forbidden';
    fake.readVolumeSnapshot = async () => {
      throw new ClusterRequestError('demo', refusal, 403, 'Forbidden');
    };
    const started = Date.now();

    const result = await taker(5000).take(fake, order(), running());

    expect(result).toEqual({
      ok: false,
      name: 'data-orders-db-3-3f2a9c1e',
      // The snapshot left in the cluster is named by its uid too.
      uid: fake.snapshots.get('shop/data-orders-db-3-3f2a9c1e')!.metadata!.uid,
      expiresAt: expect.any(String),
      reason: `could not read VolumeSnapshot data-orders-db-3-3f2a9c1e: ${refusal}; it is left in place`,
    });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('reads a snapshot again after a read lost on the way, until it is ready', async () => {
    const read = fake.readVolumeSnapshot;
    let failures = 2;
    fake.readVolumeSnapshot = async (namespace, name) => {
      if (failures-- > 0)
        throw new ClusterRequestError(
          'demo',
          'cluster "demo" did not answer: ECONNRESET',
        );
      return read(namespace, name);
    };

    await expect(
      taker(5000).take(fake, order(), running()),
    ).resolves.toMatchObject({ ok: true });
  });

  it('does not trust a ready snapshot whose content points at another snapshot', async () => {
    fake.behaviour = () => ({ foreignContent: true });

    const result = await taker().take(fake, order(), running());

    expect(result.ok).toBe(false);
    expect(result).toMatchObject({
      reason: expect.stringMatching(
        /^VolumeSnapshotContent snapcontent-\S+ does not point back at VolumeSnapshot shop\/data-orders-db-3-3f2a9c1e \(it names shop\/someone-elses, uid other-uid\)$/,
      ),
    });
  });

  it('does not trust a content taken of another volume than the claim’s', async () => {
    fake.behaviour = () => ({ ready: 0 });
    const volume = {
      metadata: { name: 'pv-3' },
      spec: { csi: { driver: 'csi.example.com', volumeHandle: 'vol-3' } },
    };
    const read = fake.readVolumeSnapshotContent;
    fake.readVolumeSnapshotContent = async name => {
      const content = await read(name);
      return (
        content && {
          ...content,
          spec: { ...content.spec, source: { volumeHandle: 'vol-9' } },
        }
      );
    };

    const result = await taker().take(fake, order({ volume }), running());

    expect(result).toMatchObject({
      ok: false,
      reason: expect.stringContaining(
        "was taken of volume handle vol-9, not of the claim's volume (vol-3)",
      ),
    });
  });

  it.each([
    [
      'is not ready itself',
      { status: { readyToUse: false } },
      'is not ready (no readyToUse and snapshotHandle in its status)',
    ],
    [
      'has no snapshotHandle',
      { status: { readyToUse: true } },
      'is not ready (no readyToUse and snapshotHandle in its status)',
    ],
    [
      'was pre-provisioned from a snapshotHandle',
      { spec: { source: { snapshotHandle: 'snap-theirs' } } },
      'was pre-provisioned (source.snapshotHandle)',
    ],
    [
      'names no source volume',
      { spec: { source: {} } },
      "was taken of volume handle (none), not of the claim's volume (handle-data-orders-db-3)",
    ],
    [
      'is of another class',
      { spec: { volumeSnapshotClassName: 'other-class' } },
      'is of VolumeSnapshotClass other-class, not csi-default',
    ],
    [
      'is of another driver',
      { spec: { driver: 'other.csi.io' } },
      'is of CSI driver other.csi.io, not csi.example.com',
    ],
  ])(
    'does not trust a ready snapshot whose content %s',
    async (_what, change, reason) => {
      fake.behaviour = () => ({ ready: 0 });
      const read = fake.readVolumeSnapshotContent;
      fake.readVolumeSnapshotContent = async name => {
        const content = await read(name);
        return (
          content && {
            ...content,
            spec: { ...content.spec, ...(change as any).spec },
            ...((change as any).status
              ? { status: (change as any).status }
              : {}),
          }
        );
      };

      const result = await taker().take(fake, order(), running());

      expect(result).toMatchObject({
        ok: false,
        reason: expect.stringContaining(reason),
      });
    },
  );

  it('does not trust a content when the claim’s volume names no CSI volume handle', async () => {
    fake.behaviour = () => ({ ready: 0 });

    const result = await taker().take(
      fake,
      order({ volume: { metadata: { name: 'pv-3' }, spec: {} } }),
      running(),
    );

    expect(result).toMatchObject({
      ok: false,
      reason: expect.stringContaining('names no CSI volume handle'),
    });
  });

  it('creates the snapshot in the job’s namespace, whatever namespace the claim as read says', async () => {
    const elsewhere = {
      ...claim,
      metadata: { ...claim.metadata, namespace: 'kube-system' },
    };

    await taker().take(fake, order({ claim: elsewhere }), running());

    expect(fake.calls[0]).toBe('create shop/data-orders-db-3-3f2a9c1e');
  });

  it('stops waiting, saying why, when the job stops for another reason (a lost Lease, a guard)', async () => {
    fake.behaviour = () => ({ never: true });
    const stop = new AbortController();
    setTimeout(
      () => stop.abort(new Error('the lease pvc-pruner-web was taken over')),
      30,
    );

    await expect(
      taker(60_000).take(fake, order(), stop.signal),
    ).resolves.toMatchObject({
      ok: false,
      reason:
        'the job stopped (the lease pvc-pruner-web was taken over) before VolumeSnapshot data-orders-db-3-3f2a9c1e was ready',
    });
  });

  it('fails when the snapshot is deleted by hand before it is ready', async () => {
    fake.behaviour = () => ({ deletedByHand: true });

    await expect(taker().take(fake, order(), running())).resolves.toMatchObject(
      {
        ok: false,
        reason:
          'VolumeSnapshot data-orders-db-3-3f2a9c1e was deleted before it was ready',
      },
    );
  });

  it('fails, saying why, when the snapshot cannot be created', async () => {
    fake.snapshots.set('shop/data-orders-db-3-3f2a9c1e', {
      metadata: { uid: 'theirs' },
    });

    await expect(taker().take(fake, order(), running())).resolves.toMatchObject(
      {
        ok: false,
        reason:
          'could not create VolumeSnapshot data-orders-db-3-3f2a9c1e: cluster "demo" refused create volumesnapshot shop/data-orders-db-3-3f2a9c1e: 409 AlreadyExists (a VolumeSnapshot of that name already exists, and it is not this job’s)',
      },
    );
  });

  it('creates a dry run’s snapshot with dryRun=All, and does not wait for it', async () => {
    fake.behaviour = () => ({ never: true });

    const result = await taker().take(fake, order({ dryRun: true }), running());

    expect(result).toEqual({
      ok: true,
      name: 'data-orders-db-3-3f2a9c1e',
      expiresAt: expect.any(String),
    });
    expect(fake.calls).toEqual([
      'create shop/data-orders-db-3-3f2a9c1e dryRun',
    ]);
  });

  it('stops waiting when the instance shuts down', async () => {
    fake.behaviour = () => ({ never: true });
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 30);

    await expect(
      taker(60_000).take(fake, order(), stop.signal),
    ).resolves.toMatchObject({
      ok: false,
      reason: expect.stringContaining('shut down before VolumeSnapshot'),
    });
  });
});
