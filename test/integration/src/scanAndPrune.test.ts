import type { KubeSim } from 'kube-sim';
import {
  claimOf,
  ORDERS_DB_ORPHANS,
  pruneAll,
  Pruner,
  readSse,
  startPruner,
  startSim,
  statefulSetIn,
  volumeOf,
  waitFor,
  writesTo,
} from './__testUtils__/harness';

jest.setTimeout(30000);

const IN_USE = [
  'data-orders-db-0',
  'data-orders-db-1',
  'wal-orders-db-0',
  'wal-orders-db-1',
];

describe('scan and prune of the demo cluster over HTTP', () => {
  let sim: KubeSim;
  let pruner: Pruner;

  beforeEach(async () => {
    sim = await startSim();
    pruner = await startPruner({ sim });
  });

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  it('finds exactly the claims orders-db left behind, and keeps the hand-made backup claim', async () => {
    const scan = await pruner.scan();

    expect(scan.clusters).toHaveLength(1);
    expect(scan.clusters[0]).toMatchObject({ cluster: 'demo', ok: true });
    const sts = statefulSetIn(scan, 'shop', 'orders-db');
    expect(sts.orphans.map(o => o.name).sort()).toEqual(ORDERS_DB_ORPHANS);
    expect(
      sts.orphans.every(
        o =>
          o.volume?.reclaimPolicy === 'Delete' && o.volume.retained === false,
      ),
    ).toBe(true);
    expect(sts.kept).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'data-orders-db-backup',
          reason: 'not-an-ordinal',
        }),
      ]),
    );
    expect(sts.inUse).toEqual([
      { template: 'data', ordinals: [0, 1] },
      { template: 'wal', ordinals: [0, 1] },
    ]);
    // Only orders-db is the orders entity's (cart-cache and search-index have other ids).
    expect(
      (scan.clusters[0] as any).statefulSets.map((s: any) => s.name),
    ).toEqual(['orders-db']);
    expect(scan.totals.orphans).toBe(5);
    expect(scan.totals.reclaimableBytes).toBe(5 * 20 * 2 ** 30);
    // A scan only reads.
    expect(writesTo(sim)).toEqual([]);
  });

  it('prunes the orphans: claims gone, Delete volumes deleted, claims in use untouched', async () => {
    const sts = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');
    const volumes = sts.orphans.map(o => o.volume!.name);
    volumes.forEach(v => expect(volumeOf(sim, v)).toBeDefined());

    const id = await pruner.prune(pruneAll(sts));
    const job = await pruner.waitForJob(id);

    expect(job.status).toBe('succeeded');
    expect(job.requestedBy).toBe('user:default/alice');
    // Who may read the job: every entity that claimed the StatefulSet.
    expect(job.claimants).toEqual(['component:default/orders']);
    expect(job.summary.deleted.map(d => d.name).sort()).toEqual(
      ORDERS_DB_ORPHANS,
    );
    expect(job.summary.deleted.every(d => d.volume?.fate === 'deleted')).toBe(
      true,
    );
    expect(job.summary.bytesReclaimed).toBe(5 * 20 * 2 ** 30);
    ORDERS_DB_ORPHANS.forEach(name =>
      expect(claimOf(sim, 'shop', name)).toBeUndefined(),
    );
    volumes.forEach(v => expect(volumeOf(sim, v)).toBeUndefined());
    [...IN_USE, 'data-orders-db-backup'].forEach(name =>
      expect(claimOf(sim, 'shop', name)).toBeDefined(),
    );
    // The claims were deleted with preconditions, and the lease was released.
    const deletes = writesTo(sim).filter(
      r => r.method === 'DELETE' && r.resource === 'persistentvolumeclaims',
    );
    expect(deletes.map(r => r.path.split('/').pop()).sort()).toEqual(
      ORDERS_DB_ORPHANS,
    );
    // The lease is released just after the job's final status is stored.
    await waitFor(
      'the lease to be released',
      () =>
        !sim.store.get(
          'coordination.k8s.io/leases',
          'shop',
          'pvc-pruner-orders-db',
        ),
      2000,
    );

    // A new scan finds nothing left to prune.
    expect(
      statefulSetIn(await pruner.scan(), 'shop', 'orders-db').orphans,
    ).toEqual([]);
  });

  it('dry run changes nothing, and every write it sends carries dryRun=All', async () => {
    const sts = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');
    const before = ORDERS_DB_ORPHANS.map(
      name => claimOf(sim, 'shop', name)!.metadata.resourceVersion,
    );
    sim.clearRequests();

    const id = await pruner.prune(pruneAll(sts, true));
    const job = await pruner.waitForJob(id);

    expect(job).toMatchObject({ status: 'succeeded', dryRun: true });
    expect(job.summary.deleted.map(d => d.name).sort()).toEqual(
      ORDERS_DB_ORPHANS,
    );
    expect(
      ORDERS_DB_ORPHANS.map(
        name => claimOf(sim, 'shop', name)?.metadata.resourceVersion,
      ),
    ).toEqual(before);
    sts.orphans.forEach(o =>
      expect(volumeOf(sim, o.volume!.name)).toBeDefined(),
    );
    expect(
      sim.store.get(
        'coordination.k8s.io/leases',
        'shop',
        'pvc-pruner-orders-db',
      ),
    ).toBeUndefined();

    const writes = writesTo(sim);
    const deletes = writes.filter(r => r.method === 'DELETE');
    expect(deletes).toHaveLength(5);
    for (const write of writes) {
      expect(new URLSearchParams(write.query).get('dryRun')).toBe('All');
    }
    // A dry run reports what would happen, and says so.
    const events = await pruner.events(id);
    expect(
      events
        .filter(e => e.type === 'pvc-deleted')
        .every(e => e.message.startsWith('Dry run')),
    ).toBe(true);
  });

  it('streams events as they happen: the first frame before the job ends, seqs 1..N in order, ?after= replays only later ones', async () => {
    const sts = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');
    // Each deletion takes 800 ms (they go out together), so the job runs for well over half a second.
    sim.addFault({
      verb: 'delete',
      resource: 'persistentvolumeclaims',
      latencyMs: 800,
    });
    const id = await pruner.prune(pruneAll(sts));

    let statusAtFirstFrame: string | undefined;
    let contentType: string | null = null;
    const frames = await readSse(
      `${pruner.baseUrl}/v1/prune-jobs/${id}/events`,
      {
        onHeaders: res => {
          contentType = res.headers.get('content-type');
        },
        onFrame: async () => {
          if (statusAtFirstFrame === undefined)
            statusAtFirstFrame = (await pruner.get(`/v1/prune-jobs/${id}`)).body
              .status;
        },
      },
    );

    expect(contentType).toMatch(/^text\/event-stream/);
    expect(['queued', 'running']).toContain(statusAtFirstFrame);
    const seqs = frames.map(f => f.data.seq);
    expect(seqs).toEqual(
      Array.from({ length: frames.length }, (_, i) => i + 1),
    );
    expect(frames.map(f => f.id)).toEqual(seqs.map(String));
    expect(
      frames.every(f => f.event === f.data.type && f.data.jobId === id),
    ).toBe(true);
    expect(frames[0].data.type).toBe('job-queued');
    expect(frames[frames.length - 1].data).toMatchObject({
      type: 'job-finished',
      status: 'succeeded',
    });
    // Frames came in over time, in many network chunks, not as one body at the end.
    expect(new Set(frames.map(f => f.chunk)).size).toBeGreaterThan(3);
    expect(frames[frames.length - 1].at - frames[0].at).toBeGreaterThan(500);

    const k = 4;
    const replay = await pruner.events(id, k);
    expect(replay.map(e => e.seq)).toEqual(seqs.slice(k));
    expect(replay).toEqual(frames.slice(k).map(f => f.data));
  });
});
