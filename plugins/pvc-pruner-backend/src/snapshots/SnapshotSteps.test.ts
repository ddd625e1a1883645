import { TEST_SEAL } from '../__testUtils__/testSeal';
import { PruneJob } from 'backstage-plugin-pvc-pruner-common';
import { KubeSim, manifest, pvc, statefulSet } from 'kube-sim';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import {
  createWebJob,
  startMemoryJobStore,
} from '../__testUtils__/memoryJobStore';
import { FakeSnapshotter } from '../__testUtils__/fakeSnapshotter';
import { PruneJobStore } from '../database';
import {
  DeleteGuardFactory,
  JobEvents,
  LeaseLock,
  PruneRunner,
  VolumeFollower,
} from '../jobs';
import { KubeGateway, VolumeSnapshot } from '../kubernetes';
import type { SnapshotOptions } from '../options';
import { DEFAULT_CLASS_ANNOTATION } from './SnapshotClassResolver';
import { SnapshotSteps } from './SnapshotSteps';
import { SnapshotTaker } from './SnapshotTaker';
import { snapshotsOf } from './snapshotsOf';

/*
 * A prune job with snapshots, through the real PruneRunner against the
 * simulator (no controllers): the claims, volumes, pods and deletes are the
 * simulator's; the snapshot calls are answered by a fake external-snapshotter.
 */

const SOURCE_PROTECTION =
  'snapshot.storage.kubernetes.io/pvc-as-source-protection';
const DRIVER = 'csi.example.com';

let sim: KubeSim;
let gateway: KubeGateway;
let store: PruneJobStore;
let closeStore: () => Promise<void>;
let fake: FakeSnapshotter;

beforeAll(async () => {
  ({ sim, gateway } = await startShopSimulator());
  sim.store.create(
    'apps/statefulsets',
    statefulSet('web', { replicas: 1 }, 'shop'),
  );
});

afterAll(async () => {
  await sim.close();
});

beforeEach(async () => {
  ({ store, close: closeStore } = await startMemoryJobStore());
  fake = new FakeSnapshotter();
  fake.classes = [
    {
      metadata: {
        name: 'csi-snaps',
        annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' },
      },
      driver: DRIVER,
      deletionPolicy: 'Delete',
    },
  ];
  fake.serve(gateway);
});

afterEach(async () => {
  jest.restoreAllMocks();
  for (const claim of sim.store.list('persistentvolumeclaims').items) {
    const name = claim.metadata.name;
    if (!claim.metadata.deletionTimestamp)
      sim.store.delete('persistentvolumeclaims', 'shop', name, {});
    const left = sim.store.get('persistentvolumeclaims', 'shop', name);
    if (left)
      sim.store.update('persistentvolumeclaims', {
        ...left,
        metadata: { ...left.metadata, finalizers: [] },
      });
  }
  for (const volume of sim.store.list('persistentvolumes').items) {
    const name = volume.metadata.name;
    if (!volume.metadata.deletionTimestamp)
      sim.store.delete('persistentvolumes', undefined, name, {});
    const left = sim.store.get('persistentvolumes', undefined, name);
    if (left)
      sim.store.update('persistentvolumes', {
        ...left,
        metadata: { ...left.metadata, finalizers: [] },
      });
  }
  const lease = sim.store.get(
    'coordination.k8s.io/leases',
    'shop',
    'pvc-pruner-web',
  );
  if (lease)
    sim.store.delete(
      'coordination.k8s.io/leases',
      'shop',
      'pvc-pruner-web',
      {},
    );
  await closeStore();
});

/** Claims of web bound to CSI volumes (Delete unless told), with only the finalizers given. */
function createBoundClaims(
  names: string[],
  options: {
    reclaimPolicy?: string;
    finalizers?: string[];
    csi?: boolean;
  } = {},
) {
  return names.map(name => {
    sim.store.create(
      'persistentvolumes',
      manifest({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: `pv-${name}` },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: options.reclaimPolicy ?? 'Delete',
          storageClassName: 'csi-sc',
          ...(options.csi === false
            ? { hostPath: { path: `/data/${name}` } }
            : { csi: { driver: DRIVER, volumeHandle: `handle-${name}` } }),
          claimRef: { namespace: 'shop', name },
        },
      }),
    );
    const created = sim.store.create(
      'persistentvolumeclaims',
      pvc(
        name,
        { storageClassName: 'csi-sc', volumeName: `pv-${name}` },
        'shop',
      ),
    );
    const claim = sim.store.update('persistentvolumeclaims', {
      ...created,
      metadata: { ...created.metadata, finalizers: options.finalizers ?? [] },
    });
    const volume = sim.store.get('persistentvolumes', undefined, `pv-${name}`)!;
    sim.store.update('persistentvolumes', {
      ...volume,
      spec: {
        ...volume.spec,
        claimRef: { namespace: 'shop', name, uid: claim.metadata.uid },
      },
    });
    return { name, uid: claim.metadata.uid as string };
  });
}

const snapshotOptions = (
  over: Partial<SnapshotOptions> = {},
): SnapshotOptions => ({
  enabled: true,
  retentionDays: 7,
  timeoutMs: 300,
  required: true,
  classByStorageClass: new Map(),
  maxKeepDays: 90,
  ...over,
});

/** Runs the job holding its Lease, with snapshots asked unless told. */
async function run(
  job: PruneJob,
  options: {
    snapshot?: boolean;
    snapshots?: Partial<SnapshotOptions>;
    guards?: DeleteGuardFactory[];
  } = {},
) {
  const events = new JobEvents(store);
  const snapshots = snapshotOptions(options.snapshots);
  const runner = new PruneRunner(
    store,
    events,
    new VolumeFollower(300),
    { renewIntervalMs: 60_000 },
    options.guards ?? [],
    [
      new SnapshotSteps({
        events,
        options: snapshots,
        seal: TEST_SEAL,
        taker: new SnapshotTaker({
          timeoutMs: snapshots.timeoutMs,
          retentionDays: snapshots.retentionDays,
          firstPollMs: 5,
          maxPollMs: 20,
          seal: TEST_SEAL,
        }),
      }),
    ],
  );
  const lease = await new LeaseLock({
    leaseDurationSeconds: 30,
    holderPrefix: 'backstage-a',
    clock: store,
  }).acquire(gateway, {
    namespace: 'shop',
    statefulSet: 'web',
    jobId: job.id,
    requestedBy: 'user:default/alice',
    dryRun: job.dryRun,
  });
  const result = await runner.run(job, gateway, lease, undefined, {
    credentials: {} as any,
    snapshot: options.snapshot ?? true,
  });
  return { result, events: await store.listEvents(job.id) };
}

/** Records each claim delete among the fake's calls, so their order shows. */
function recordDeletes() {
  const deleteClaim = gateway.deleteClaim.bind(gateway);
  jest.spyOn(gateway, 'deleteClaim').mockImplementation(async (...args) => {
    fake.calls.push(`delete ${args[1]}${args[3] ? ' dryRun' : ''}`);
    return deleteClaim(...args);
  });
}

const deletedClaims = () =>
  sim
    .requests()
    .filter(r => r.verb === 'delete' && r.resource === 'persistentvolumeclaims')
    .map(r => r.path.split('/').pop());

beforeEach(() => sim.clearRequests());

describe('a prune with snapshots', () => {
  it('deletes each claim only once its snapshot is ready, and its outcome names the snapshot, its restore size and expiry', async () => {
    const pvcs = createBoundClaims(['data-web-1', 'data-web-2']);
    fake.behaviour = () => ({ ready: 3, restoreSize: '1Gi' });
    recordDeletes();
    const job = await createWebJob(store, pvcs);

    const { result, events } = await run(job);

    expect(result.status).toBe('succeeded');
    expect(deletedClaims()).toEqual(['data-web-1', 'data-web-2']);
    const prefix = job.id.slice(0, 8);
    const { calls, contents } = fake;
    for (const name of ['data-web-1', 'data-web-2']) {
      const ready = calls.findIndex(
        c =>
          c.startsWith('get content') &&
          contents.get(c.slice(12))?.spec?.volumeSnapshotRef?.name ===
            `${name}-${prefix}`,
      );
      expect(ready).toBeGreaterThan(-1);
      expect(calls.indexOf(`delete ${name}`)).toBeGreaterThan(ready);
    }
    expect(result.summary.deleted).toEqual([
      expect.objectContaining({
        name: 'data-web-1',
        snapshot: {
          name: `data-web-1-${prefix}`,
          uid: expect.any(String),
          contentName: expect.stringMatching(/^snapcontent-/),
          restoreBytes: 2 ** 30,
          expiresAt: expect.any(String),
        },
      }),
      expect.objectContaining({
        name: 'data-web-2',
        snapshot: expect.objectContaining({ name: `data-web-2-${prefix}` }),
      }),
    ]);
    const messages = events.map(e => `${e.type} ${e.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^snapshot-creating Creating a VolumeSnapshot of data-web-1 \(class csi-snaps\)/,
        ),
        expect.stringMatching(
          new RegExp(
            `^snapshot-ready VolumeSnapshot data-web-1-${prefix} of data-web-1 is ready, restore size 1 GiB; kept until `,
          ),
        ),
      ]),
    );
    // Snapshot events come before the claim's deletion is announced.
    const types = events.filter(e => e.pvc === 'data-web-1').map(e => e.type);
    expect(types.indexOf('snapshot-ready')).toBeLessThan(
      types.indexOf('pvc-deleting'),
    );
  });

  it('does not delete a claim whose snapshot reports an error: the job ends incomplete, naming it and why', async () => {
    const pvcs = createBoundClaims(['data-web-1', 'data-web-2']);
    fake.behaviour = claim =>
      claim === 'data-web-2'
        ? { error: 'driver refused: quota exceeded' }
        : { ready: 0 };
    const job = await createWebJob(store, pvcs);

    const { result, events } = await run(job);

    expect(deletedClaims()).toEqual(['data-web-1']);
    expect(result.status).toBe('incomplete');
    const name = `data-web-2-${job.id.slice(0, 8)}`;
    expect(result.reason).toBe(
      `Not everything was reclaimed: data-web-2 was not deleted: its snapshot failed: VolumeSnapshot ${name} failed: driver refused: quota exceeded`,
    );
    expect(result.summary.skipped).toEqual([
      expect.objectContaining({
        name: 'data-web-2',
        reason: expect.stringContaining('quota exceeded'),
      }),
    ]);
    expect(events.filter(e => e.pvc === 'data-web-2').map(e => e.type)).toEqual(
      ['snapshot-creating', 'snapshot-failed', 'pvc-skipped'],
    );
    expect((await store.getJob(job.id))?.status).toBe('incomplete');
  });

  it('does not delete a claim whose snapshot is not ready within the timeout', async () => {
    const pvcs = createBoundClaims(['data-web-1']);
    fake.behaviour = () => ({ never: true });
    const job = await createWebJob(store, pvcs);

    const { result } = await run(job, { snapshots: { timeoutMs: 100 } });

    expect(deletedClaims()).toEqual([]);
    expect(result.status).toBe('incomplete');
    expect(result.reason).toContain(
      'data-web-1 was not deleted: its snapshot failed: VolumeSnapshot',
    );
    expect(result.reason).toContain(
      'was not ready within 0.1 s (pvcPruner.snapshots.timeoutSeconds)',
    );
    // The snapshot left in the cluster is named, by name and uid, in the outcome and the audit record.
    const [left] = [...fake.snapshots.values()];
    const named = {
      name: left.metadata!.name,
      uid: left.metadata!.uid,
      expiresAt: expect.any(String),
    };
    expect(result.summary.skipped).toEqual([
      expect.objectContaining({ name: 'data-web-1', snapshot: named }),
    ]);
    expect(snapshotsOf(result.summary)).toEqual([
      {
        claim: 'data-web-1',
        snapshot: left.metadata!.name,
        uid: left.metadata!.uid,
      },
    ]);
  });

  it.each([
    [
      'deleted by hand',
      (snapshot: VolumeSnapshot) => {
        fake.snapshots.delete(
          `${snapshot.metadata!.namespace}/${snapshot.metadata!.name}`,
        );
      },
      /VolumeSnapshot data-web-1-\w+ no longer exists, right before the delete$/,
    ],
    [
      'replaced under its name',
      (snapshot: VolumeSnapshot) => {
        snapshot.metadata!.uid = 'a-new-one';
      },
      /VolumeSnapshot data-web-1-\w+ was replaced/,
    ],
    [
      'being deleted',
      (snapshot: VolumeSnapshot) => {
        snapshot.metadata!.deletionTimestamp = new Date();
      },
      /VolumeSnapshot data-web-1-\w+ is being deleted, right before the delete$/,
    ],
    [
      'left with a content being deleted',
      (snapshot: VolumeSnapshot) => {
        const content = fake.contents.get(
          snapshot.status!.boundVolumeSnapshotContentName!,
        )!;
        content.metadata!.deletionTimestamp = new Date();
      },
      /VolumeSnapshotContent snapcontent-\S+ of VolumeSnapshot data-web-1-\w+ is being deleted/,
    ],
  ])(
    'does not delete a claim whose ready snapshot was %s after it was verified, before the delete',
    async (_what, tamper, reason) => {
      const pvcs = createBoundClaims(['data-web-1']);
      fake.behaviour = () => ({ ready: 0 });
      // Between the step and the last check: once the job has said it is about to check and delete.
      const append = JobEvents.prototype.append;
      jest
        .spyOn(JobEvents.prototype, 'append')
        .mockImplementation(async function tamperFirst(this: JobEvents, event) {
          if (event.type === 'pvc-deleting')
            for (const snapshot of fake.snapshots.values()) tamper(snapshot);
          return append.call(this, event);
        });
      const job = await createWebJob(store, pvcs);

      const { result } = await run(job);

      expect(deletedClaims()).toEqual([]);
      expect(result.status).toBe('incomplete');
      expect(result.reason).toMatch(/data-web-1 was not deleted: /);
      expect(result.summary.skipped).toEqual([
        expect.objectContaining({
          name: 'data-web-1',
          reason: expect.stringMatching(reason),
          snapshot: expect.objectContaining({ uid: expect.any(String) }),
        }),
      ]);
    },
  );

  it('stops waiting for a snapshot once a guard has a reason to stop the job, and deletes nothing', async () => {
    const pvcs = createBoundClaims(['data-web-1']);
    fake.behaviour = () => ({ never: true });
    let abortReason: string | undefined;
    const guard: DeleteGuardFactory = {
      start: async () => ({
        get abortReason() {
          return abortReason;
        },
        confirmLive: async () => undefined,
        stop: () => undefined,
      }),
    };
    // While the job waits for the snapshot.
    fake.onCreate = () => {
      setTimeout(() => {
        abortReason = 'StatefulSet shop/web was scaled up to 2 replicas';
      }, 50);
    };
    const started = Date.now();

    const { result } = await run(await createWebJob(store, pvcs), {
      snapshots: { timeoutMs: 60_000 },
      guards: [guard],
    });

    expect(Date.now() - started).toBeLessThan(3000);
    expect(deletedClaims()).toEqual([]);
    expect(result.status).toBe('aborted');
    expect(result.summary.skipped).toEqual([
      expect.objectContaining({
        name: 'data-web-1',
        reason: expect.stringContaining(
          'the job stopped (StatefulSet shop/web was scaled up to 2 replicas) before VolumeSnapshot',
        ),
      }),
    ]);
  });

  it('takes the snapshots a batch at a time: the first claims are deleted before the last ones are snapshotted', async () => {
    const names = Array.from({ length: 18 }, (_, i) => `data-web-${i + 1}`);
    const pvcs = createBoundClaims(names);
    recordDeletes();
    const job = await createWebJob(store, pvcs);

    const { result } = await run(job);

    expect(result.status).toBe('succeeded');
    const { calls } = fake;
    const firstDelete = calls.indexOf('delete data-web-1');
    const lastCreate = calls.findIndex(c =>
      c.startsWith('create shop/data-web-18-'),
    );
    expect(firstDelete).toBeGreaterThan(-1);
    expect(lastCreate).toBeGreaterThan(firstDelete);
  });

  it('does not delete a claim whose snapshot was deleted by hand before it was ready', async () => {
    const pvcs = createBoundClaims(['data-web-1']);
    fake.behaviour = () => ({ deletedByHand: true });
    const job = await createWebJob(store, pvcs);

    const { result } = await run(job);

    expect(deletedClaims()).toEqual([]);
    expect(result.status).toBe('incomplete');
  });

  it('with required, keeps a claim with no VolumeSnapshotClass; without it, deletes it and says it has no snapshot', async () => {
    fake.classes = [];
    const first = createBoundClaims(['data-web-1']);
    const kept = await run(await createWebJob(store, first));
    expect(deletedClaims()).toEqual([]);
    expect(kept.result.status).toBe('incomplete');
    expect(kept.result.reason).toContain(
      'data-web-1 was not deleted: it has no VolumeSnapshotClass, and pvcPruner.snapshots.required is true: no VolumeSnapshotClass is marked default for CSI driver csi.example.com',
    );
    expect(fake.calls.filter(c => c.startsWith('create'))).toEqual([]);

    sim.clearRequests();
    const lenient = await run(await createWebJob(store, first), {
      snapshots: { required: false },
    });
    expect(deletedClaims()).toEqual(['data-web-1']);
    expect(lenient.result.status).toBe('succeeded');
    expect(lenient.result.summary.deleted).toEqual([
      expect.objectContaining({
        name: 'data-web-1',
        noSnapshot: expect.stringMatching(
          /^it has no VolumeSnapshotClass \(pvcPruner.snapshots.required is false\): /,
        ),
      }),
    ]);
    expect(lenient.result.summary.deleted[0].snapshot).toBeUndefined();
  });

  it('keeps a claim whose driver has two default classes, naming both', async () => {
    fake.classes.push({
      metadata: {
        name: 'csi-other',
        annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' },
      },
      driver: DRIVER,
    });
    const pvcs = createBoundClaims(['data-web-1']);

    const { result } = await run(await createWebJob(store, pvcs), {
      snapshots: { required: false },
    });

    expect(deletedClaims()).toEqual([]);
    expect(result.reason).toContain('csi-snaps and csi-other');
  });

  it('takes no snapshot of a Retain volume, and says why', async () => {
    const pvcs = createBoundClaims(['data-web-1'], { reclaimPolicy: 'Retain' });

    const { result, events } = await run(await createWebJob(store, pvcs));

    expect(fake.calls.filter(c => c.startsWith('create'))).toEqual([]);
    expect(deletedClaims()).toEqual(['data-web-1']);
    expect(result.summary.deleted[0].noSnapshot).toContain(
      'reclaim policy Retain',
    );
    expect(events.map(e => e.type)).toContain('snapshot-skipped');
  });

  it('takes no snapshot of a claim bound to no volume, which holds no data, and says why', async () => {
    const created = sim.store.create(
      'persistentvolumeclaims',
      pvc('data-web-1', {}, 'shop'),
    );
    sim.store.update('persistentvolumeclaims', {
      ...created,
      metadata: { ...created.metadata, finalizers: [] },
    });
    const pvcs = [{ name: 'data-web-1', uid: created.metadata.uid as string }];

    const { result } = await run(await createWebJob(store, pvcs));

    expect(fake.calls.filter(c => c.startsWith('create'))).toEqual([]);
    expect(deletedClaims()).toEqual(['data-web-1']);
    expect(result.summary.deleted[0].noSnapshot).toBe(
      'it is not bound to a volume, so it holds no data to snapshot',
    );
  });

  it("does not take the snapshot controller's source-protection finalizer for a reason to keep the claim", async () => {
    const pvcs = createBoundClaims(['data-web-1'], {
      finalizers: ['kubernetes.io/pvc-protection', SOURCE_PROTECTION],
    });

    const { result } = await run(await createWebJob(store, pvcs));

    expect(deletedClaims()).toEqual(['data-web-1']);
    expect(result.summary.skipped).toEqual([]);
  });

  it('sends the delete only once the snapshot controller has lifted its finalizer from the ready snapshot’s claim', async () => {
    const pvcs = createBoundClaims(['data-web-1'], {
      finalizers: ['kubernetes.io/pvc-protection', SOURCE_PROTECTION],
    });
    // As the snapshot controller does, a moment after the snapshot is ready.
    fake.onReady = () =>
      setTimeout(() => {
        const held = sim.store.require(
          'persistentvolumeclaims',
          'shop',
          'data-web-1',
        );
        sim.store.update('persistentvolumeclaims', {
          ...held,
          metadata: {
            ...held.metadata,
            finalizers: ['kubernetes.io/pvc-protection'],
          },
        });
        fake.calls.push('lifted data-web-1');
      }, 100);
    recordDeletes();

    const { result } = await run(await createWebJob(store, pvcs));

    expect(deletedClaims()).toEqual(['data-web-1']);
    expect(fake.calls.indexOf('delete data-web-1')).toBeGreaterThan(
      fake.calls.indexOf('lifted data-web-1'),
    );
    expect(fake.calls.indexOf('lifted data-web-1')).toBeGreaterThan(-1);
    expect(result.summary.skipped).toEqual([]);
  });

  it('creates a dry run’s snapshots with dryRun=All, without waiting, and its deletes are dry runs too', async () => {
    const pvcs = createBoundClaims(['data-web-1']);
    fake.behaviour = () => ({ never: true });
    recordDeletes();
    const job = await createWebJob(store, pvcs, { dryRun: true });

    const { result } = await run(job);

    expect(result.status).toBe('succeeded');
    expect(fake.calls).toEqual([
      `create shop/data-web-1-${job.id.slice(0, 8)} dryRun`,
      'delete data-web-1 dryRun',
    ]);
    expect(result.summary.deleted[0].snapshot?.name).toBe(
      `data-web-1-${job.id.slice(0, 8)}`,
    );
  });

  it('takes no snapshot when the job does not ask for one', async () => {
    const pvcs = createBoundClaims(['data-web-1']);

    const { result } = await run(await createWebJob(store, pvcs), {
      snapshot: false,
    });

    expect(result.status).toBe('succeeded');
    expect(fake.calls).toEqual([]);
    expect(result.summary.deleted[0].snapshot).toBeUndefined();
  });
});
