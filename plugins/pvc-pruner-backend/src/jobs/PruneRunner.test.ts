import { PruneEvent, PruneJob } from 'backstage-plugin-pvc-pruner-common';
import {
  horizontalPodAutoscaler,
  KubeSim,
  manifest,
  pvc,
  statefulSet,
} from 'kube-sim';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import { JobEvents } from './JobEvents';
import { ClusterRequestError, KubeGateway } from '../kubernetes';
import {
  HeldLease,
  HOLDER_ANNOTATION,
  JOB_ANNOTATION,
  LeaseLock,
  REQUESTED_BY_ANNOTATION,
} from './LeaseLock';
import { PruneJobStore } from '../database';
import {
  createWebJob,
  startMemoryJobStore,
} from '../__testUtils__/memoryJobStore';
import { PruneRunner } from './PruneRunner';
import type { DeleteGuard, DeleteGuardFactory } from './DeleteGuard';
import { VolumeFollower } from './VolumeFollower';

/* PruneRunner against the simulator (no controllers) and an in-memory SQLite job store. */

let sim: KubeSim;
let gateway: KubeGateway;
let closeStore: () => Promise<void>;
let store: PruneJobStore;

const LEASES = 'coordination.k8s.io/leases';

/** The job's real Lease on StatefulSet web; `monotonicNow` stands for this process's monotonic clock. */
function holdLease(
  jobId: string,
  monotonicNow?: () => number,
): Promise<HeldLease> {
  return new LeaseLock({
    leaseDurationSeconds: 30,
    holderPrefix: 'backstage-a',
    clock: store,
    monotonicNow,
  }).acquire(gateway, {
    namespace: 'shop',
    statefulSet: 'web',
    jobId,
    requestedBy: 'user:default/alice',
    dryRun: false,
  });
}

/** Another replica's job takes the Lease over (as if it had expired there). */
function stealLease() {
  const stolen = structuredClone(
    sim.store.require(LEASES, 'shop', 'pvc-pruner-web'),
  );
  stolen.spec.holderIdentity = 'backstage-b/job-2';
  stolen.metadata.annotations = {
    [REQUESTED_BY_ANNOTATION]: 'user:default/bob',
    [JOB_ANNOTATION]: 'job-2',
    [HOLDER_ANNOTATION]: 'backstage-b/job-2',
  };
  sim.store.update(LEASES, stolen);
}

const claimDeletes = () =>
  sim
    .requests()
    .filter(r => r.verb === 'delete' && r.resource === 'persistentvolumeclaims')
    .map(r => r.path.split('/').pop());

const newJob = (pvcs: Array<{ name: string; uid: string }>) =>
  createWebJob(store, pvcs);

const runner = (events: JobEvents) =>
  new PruneRunner(store, events, new VolumeFollower(500), {
    renewIntervalMs: 60_000,
  });

/** Runs the job as PruneJobs does: holding its Lease, logging its events to the store. */
async function runHoldingLease(job: PruneJob) {
  return runner(new JobEvents(store)).run(
    job,
    gateway,
    await holdLease(job.id),
  );
}

/**
 * The job's Lease, on a monotonic clock the test moves: `freezeFor(ms)` is
 * this process stopped (SIGSTOP, a long pause) for that long.
 */
async function holdLeaseWhileFrozen(jobId: string) {
  let monotonic = 0;
  const lease = await holdLease(jobId, () => monotonic);
  return {
    lease,
    freezeFor: (ms: number) => {
      monotonic += ms;
    },
  };
}

/** Lets the next delete of a claim fail with `status`. */
function failNextClaimDelete(status: number) {
  sim.addFault({
    verb: 'delete',
    resource: 'persistentvolumeclaims',
    status,
    times: 1,
  });
}

/** The job stopped because bob's job-2 took the Lease, and left that Lease alone. */
function expectAbortedForJob2(result: { status: string; reason?: string }) {
  expect(result.status).toBe('aborted');
  expect(result.reason).toMatch(
    /^the lease shop\/pvc-pruner-web is now held by user:default\/bob \(job job-2\)/,
  );
  expect(
    sim.store.get(LEASES, 'shop', 'pvc-pruner-web')?.spec.holderIdentity,
  ).toBe('backstage-b/job-2');
}

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
});

afterEach(async () => {
  sim.clearFaults();
  sim.clearRequests();
  // No controllers: claims deleted by a test are kept Terminating by pvc-protection.
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
  const lease = sim.store.get(LEASES, 'shop', 'pvc-pruner-web');
  if (lease) sim.store.delete(LEASES, 'shop', 'pvc-pruner-web', {});
  await closeStore();
});

/**
 * Unused claims of web. Without controllers nobody would lift admission's
 * pvc-protection finalizer, so they get only the finalizers given (as the
 * pvc-protection controller leaves an unused claim once it is deleted).
 */
function createClaims(names: string[], finalizers: string[] = []) {
  return names.map(name => {
    const created = sim.store.create(
      'persistentvolumeclaims',
      pvc(name, {}, 'shop'),
    );
    const claim = sim.store.update('persistentvolumeclaims', {
      ...created,
      metadata: { ...created.metadata, finalizers },
    });
    return { name, uid: claim.metadata.uid as string };
  });
}

/**
 * Runs `freeze` once, right after the pod check of the `nth` re-check: the
 * moment between a claim's last live check and its delete, where a process
 * frozen by SIGSTOP (or a long pause) wakes up believing it still holds the Lease.
 */
function freezeAfterPodCheck(nth: number, freeze: () => void) {
  const listPods = gateway.listPods.bind(gateway);
  let calls = 0;
  jest.spyOn(gateway, 'listPods').mockImplementation(async (...args) => {
    const pods = await listPods(...args);
    if (++calls === nth) freeze();
    return pods;
  });
}

describe('PruneRunner', () => {
  it('stops before its next batch of deletes once another replica has marked its job interrupted, and leaves it so', async () => {
    const names = Array.from({ length: 10 }, (_, i) => `data-web-${i + 1}`);
    const pvcs = createClaims(names);
    // Each delete takes a while: the first batch's check grows too old for
    // its last claims (it vouches for a second at most), and the sweep lands
    // while the first deletes are in flight.
    sim.addFault({
      verb: 'delete',
      resource: 'persistentvolumeclaims',
      latencyMs: 1200,
    });
    const job = await createWebJob(store, pvcs, {
      requestedBy: 'user:default/guest',
    });
    const events = new JobEvents(store);
    const reason =
      'The Backstage instance running this job stopped before it finished';
    let sweep: Promise<unknown> | undefined;
    events.subscribe(job.id, (event: PruneEvent) => {
      // Another replica took this one for dead (its heartbeat was late).
      if (event.type === 'pvc-deleting')
        sweep ??= store.markInterrupted({
          // Its heartbeat counts as a minute late.
          staleAfterMs: -60_000,
          reason,
        });
    });

    const result = await runner(events).run(
      job,
      gateway,
      await holdLease(job.id),
    );

    expect(result.status).toBe('interrupted');
    const firstBatch = names.slice(0, 8);
    expect(claimDeletes()).toEqual(firstBatch);
    const stored = await store.getJob(job.id);
    expect(stored).toMatchObject({ status: 'interrupted', reason });
    expect(stored?.summary?.deleted.map(d => d.name).sort()).toEqual(
      [...firstBatch].sort(),
    );
    expect(stored?.summary?.skipped).toEqual([
      expect.objectContaining({
        name: 'data-web-9',
        reason: 'not attempted: the job was ended elsewhere (interrupted)',
      }),
      expect.objectContaining({ name: 'data-web-10' }),
    ]);
    const finished = (await store.listEvents(job.id)).filter(
      e => e.type === 'job-finished',
    );
    expect(finished).toEqual([
      expect.objectContaining({ status: 'interrupted', message: reason }),
    ]);
  });

  it('lists the pods once for a whole batch of claims, after reading every claim', async () => {
    const pvcs = createClaims(['data-web-1', 'data-web-2', 'data-web-3']);
    const job = await newJob(pvcs);
    sim.clearRequests();

    const result = await runHoldingLease(job);

    expect(result.status).toBe('succeeded');
    const requests = sim
      .requests()
      .filter(r => r.resource !== 'leases')
      .map(r => `${r.verb} ${r.resource}`);
    expect(requests.filter(r => r === 'list pods')).toHaveLength(1);
    const podList = requests.indexOf('list pods');
    expect(
      requests.slice(podList).filter(r => r === 'get persistentvolumeclaims'),
    ).toHaveLength(
      // Only the follow-ups' reads of deleted claims come after.
      requests
        .slice(requests.indexOf('delete persistentvolumeclaims'))
        .filter(r => r === 'get persistentvolumeclaims').length,
    );
    expect(claimDeletes()).toEqual(['data-web-1', 'data-web-2', 'data-web-3']);
  });

  it('sends each delete right after its pod check: the event it writes does not sit in between (found by the safety campaign, seed 2371220831)', async () => {
    const pvcs = createClaims(['data-web-1']);
    const job = await newJob(pvcs);
    const events = new JobEvents(store);
    const append = events.append.bind(events);
    // A slow database: writing "Deleting data-web-1" takes 400 ms.
    jest.spyOn(events, 'append').mockImplementation(async event => {
      if (event.type === 'pvc-deleting')
        await new Promise(resolve => setTimeout(resolve, 400));
      return append(event);
    });

    await runner(events).run(job, gateway, await holdLease(job.id));

    const served = sim.requests();
    const podList = served
      .filter(r => r.verb === 'list' && r.resource === 'pods')
      .pop()!;
    const claimDelete = served.find(
      r => r.verb === 'delete' && r.resource === 'persistentvolumeclaims',
    )!;
    const podListAnswered = Date.parse(podList.time);
    const deleteArrived = Date.parse(claimDelete.time) - claimDelete.durationMs;
    expect(deleteArrived - podListAnswered).toBeLessThan(200);
    expect((await store.listEvents(job.id)).map(e => e.type)).toEqual(
      expect.arrayContaining(['pvc-deleting', 'pvc-deleted']),
    );
  });

  it('names a claim in its log before a delete goes out for it, so a process frozen or killed right after still leaves it there (found by the safety campaign, seed 4242083496)', async () => {
    const pvcs = createClaims(['data-web-1', 'data-web-2']);
    const job = await newJob(pvcs);
    const loggedAtDelete: string[][] = [];
    const deleteClaim = gateway.deleteClaim.bind(gateway);
    const spy = jest
      .spyOn(gateway, 'deleteClaim')
      .mockImplementation(async (...args) => {
        loggedAtDelete.push(
          (await store.listEvents(job.id))
            .filter(e => e.pvc === args[1])
            .map(e => e.type),
        );
        return deleteClaim(...args);
      });
    try {
      await runHoldingLease(job);
    } finally {
      spy.mockRestore();
    }
    expect(loggedAtDelete).toEqual([['pvc-deleting'], ['pvc-deleting']]);
  });

  it('accepted is not deleted: a claim a foreign finalizer holds past the follow-up ends the job incomplete, named with its finalizers', async () => {
    const job = await newJob([
      ...createClaims(['data-web-1']),
      ...createClaims(['data-web-2'], ['acc.example/backup-hold']),
    ]);

    const result = await runHoldingLease(job);

    expect(result.status).toBe('incomplete');
    expect(result.reason).toBe(
      'Not everything was reclaimed: data-web-2 is still terminating, held by acc.example/backup-hold',
    );
    expect(result.summary.deleted.map(d => d.name)).toEqual(['data-web-1']);
    expect(result.summary.terminating).toEqual([
      expect.objectContaining({
        name: 'data-web-2',
        finalizers: ['acc.example/backup-hold'],
      }),
    ]);
    const events = await store.listEvents(job.id);
    expect(events.filter(e => e.pvc === 'data-web-2').map(e => e.type)).toEqual(
      ['pvc-deleting', 'pvc-terminating'],
    );
    expect(events[events.length - 1]).toMatchObject({
      type: 'job-finished',
      status: 'incomplete',
      message:
        'Prune incomplete: 1 deleted, 1 still terminating, 0 skipped, 0 failed. Not everything was reclaimed: data-web-2 is still terminating, held by acc.example/backup-hold',
    });
    expect(await store.getJob(job.id)).toMatchObject({
      status: 'incomplete',
      summary: {
        terminating: [expect.objectContaining({ name: 'data-web-2' })],
      },
    });
  });

  it('shut down while following its last deletion: interrupted, the claim reported still terminating, not incomplete', async () => {
    const job = await newJob(
      createClaims(['data-web-1'], ['acc.example/backup-hold']),
    );
    const stop = new AbortController();
    const events = new JobEvents(store);
    events.subscribe(job.id, event => {
      if (event.type === 'pvc-deleting') setTimeout(() => stop.abort(), 300);
    });

    const result = await new PruneRunner(
      store,
      events,
      new VolumeFollower(30_000),
      { renewIntervalMs: 60_000 },
    ).run(job, gateway, await holdLease(job.id), stop.signal);

    expect(result.status).toBe('interrupted');
    expect(result.reason).toBe(
      'Interrupted: the Backstage instance running this job shut down; run a new scan',
    );
    expect(result.summary.deleted).toEqual([]);
    expect(result.summary.terminating.map(t => t.name)).toEqual(['data-web-1']);
    // Its Lease is released.
    expect(sim.store.get(LEASES, 'shop', 'pvc-pruner-web')).toBeUndefined();
  });

  it('frees its Lease before it says it has finished, so a re-run started on that word is not refused', async () => {
    const job = await newJob(createClaims(['data-web-1']));
    const events = new JobEvents(store);
    let leaseAtFinish: unknown = 'not seen';
    events.subscribe(job.id, event => {
      if (event.type === 'job-finished')
        leaseAtFinish = sim.store.get(LEASES, 'shop', 'pvc-pruner-web');
    });

    const result = await runner(events).run(
      job,
      gateway,
      await holdLease(job.id),
    );

    expect(result.summary.failed).toEqual([]);
    expect(leaseAtFinish).toBeUndefined();
  });

  it('a failure outranks claims still terminating, and its reason names both', async () => {
    const job = await newJob([
      ...createClaims(['data-web-1']),
      ...createClaims(['data-web-2'], ['acc.example/backup-hold']),
    ]);
    // The first delete (data-web-1, lowest ordinal first) fails.
    failNextClaimDelete(500);

    const result = await runHoldingLease(job);

    expect(result.status).toBe('failed');
    expect(result.summary.failed.map(f => f.name)).toEqual(['data-web-1']);
    expect(result.reason).toBe(
      '1 claim(s) could not be deleted; not everything was reclaimed: data-web-2 is still terminating, held by acc.example/backup-hold',
    );
  });

  it('reads the pods, the StatefulSet, its autoscalers and its namespace’s StatefulSets last, together: nothing but the delete goes out between the in-use check and the delete', async () => {
    sim.store.create(
      'persistentvolumes',
      manifest({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'pv-web-1' },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
        },
      }),
    );
    const [bound] = createClaims(['data-web-1']);
    const claim = sim.store.require(
      'persistentvolumeclaims',
      'shop',
      bound.name,
    );
    sim.store.update('persistentvolumeclaims', {
      ...claim,
      spec: { ...claim.spec, volumeName: 'pv-web-1' },
    });
    const job = await newJob([bound]);
    sim.clearRequests();

    await runHoldingLease(job);

    const requests = sim
      .requests()
      .filter(r => r.resource !== 'leases')
      .map(r => `${r.verb} ${r.resource}`);
    const deleteAt = requests.indexOf('delete persistentvolumeclaims');
    expect(requests.slice(deleteAt - 6, deleteAt - 4)).toEqual([
      'get persistentvolumeclaims',
      'get persistentvolumes',
    ]);
    // Sent together, so any may arrive first.
    expect(requests.slice(deleteAt - 4, deleteAt).sort()).toEqual([
      'get statefulsets',
      'list horizontalpodautoscalers',
      'list pods',
      'list statefulsets',
    ]);
    sim.store.delete('persistentvolumes', undefined, 'pv-web-1', {});
  });

  it('reports a claim as deleted when its delete went through but the answer was lost (found by the safety campaign, seed 2195563500)', async () => {
    const pvcs = createClaims(['data-web-1']);
    const job = await newJob(pvcs);
    const deleteClaim = gateway.deleteClaim.bind(gateway);
    // The delete reaches the cluster; its answer does not come back in time (the process froze meanwhile).
    const spy = jest
      .spyOn(gateway, 'deleteClaim')
      .mockImplementation(async (...args) => {
        await deleteClaim(...args);
        throw new ClusterRequestError(
          'demo',
          'cluster "demo" did not answer delete persistentvolumeclaim shop/data-web-1 within 5000 ms',
          504,
          'Timeout',
        );
      });
    try {
      const result = await runHoldingLease(job);
      expect(result.summary.failed).toEqual([]);
      expect(
        [...result.summary.deleted, ...(result.summary.terminating ?? [])].map(
          c => c.name,
        ),
      ).toEqual(['data-web-1']);
    } finally {
      spy.mockRestore();
    }
    const types = (await store.listEvents(job.id))
      .filter(e => e.pvc === 'data-web-1')
      .map(e => e.type);
    expect(types).not.toContain('pvc-failed');
  });

  /** The database refuses to store `type` events, the first `times` of them. */
  function refuseEventWrites(type: PruneEvent['type'], times = Infinity) {
    const appendEvent = store.appendEvent.bind(store);
    let refused = 0;
    return jest.spyOn(store, 'appendEvent').mockImplementation(async event => {
      if (event.type === type && refused++ < times)
        throw new Error('Connection terminated unexpectedly');
      return appendEvent(event);
    });
  }

  it.each([
    [
      'though the first write of its log line fails',
      1,
      ['pvc-deleting', 'pvc-deleted'],
    ],
    ['when its log cannot say so at all', Infinity, ['pvc-deleting']],
  ])(
    'reports a deletion it saw finish as deleted, and not also failed, %s',
    async (_, times, logged) => {
      const job = await newJob(createClaims(['data-web-1']));
      const spy = refuseEventWrites('pvc-deleted', times);
      try {
        const result = await runHoldingLease(job);
        expect(result.status).toBe('succeeded');
        expect(result.summary.deleted.map(d => d.name)).toEqual(['data-web-1']);
        expect(result.summary.failed).toEqual([]);
      } finally {
        spy.mockRestore();
      }
      expect(
        (await store.listEvents(job.id))
          .filter(e => e.pvc === 'data-web-1')
          .map(e => e.type),
      ).toEqual(logged);
    },
  );

  it('still reports a delete the cluster refused as failed', async () => {
    const job = await newJob(createClaims(['data-web-1']));
    failNextClaimDelete(503);
    const result = await runHoldingLease(job);
    expect(result.summary.failed.map(f => f.name)).toEqual(['data-web-1']);
    expect(
      sim.store.get('persistentvolumeclaims', 'shop', 'data-web-1')?.metadata
        .deletionTimestamp,
    ).toBeUndefined();
  });

  it('stops before a delete when the StatefulSet changed after the claim was checked (found by the safety campaign, seed 2920827578)', async () => {
    const job = await newJob(createClaims(['data-web-1', 'data-web-2']));
    // Right after data-web-1's pod check, the StatefulSet scales up to run ordinal 1.
    const listPods = gateway.listPods.bind(gateway);
    const spy = jest
      .spyOn(gateway, 'listPods')
      .mockImplementation(async (...args) => {
        const pods = await listPods(...args);
        const sts = structuredClone(
          sim.store.require('apps/statefulsets', 'shop', 'web'),
        );
        sts.spec.replicas = 3;
        // Its watch event is on the wire before the delete would be.
        sim.store.update('apps/statefulsets', sts);
        return pods;
      });
    let result;
    try {
      result = await runHoldingLease(job);
    } finally {
      spy.mockRestore();
      const sts = structuredClone(
        sim.store.require('apps/statefulsets', 'shop', 'web'),
      );
      sts.spec.replicas = 1;
      sim.store.update('apps/statefulsets', sts);
    }
    expect(claimDeletes()).toEqual([]);
    expect(result.status).toBe('aborted');
    expect(result.summary.skipped.map(s => s.name)).toEqual([
      'data-web-1',
      'data-web-2',
    ]);
  });

  describe('claims that will come back', () => {
    const HPAS = 'autoscaling/horizontalpodautoscalers';
    afterEach(() => {
      jest.restoreAllMocks();
      if (sim.store.get(HPAS, 'shop', 'web'))
        sim.store.delete(HPAS, 'shop', 'web', {});
    });

    it('skips a claim inside the range of an HPA that targets the StatefulSet, and deletes the one beyond it', async () => {
      sim.store.create(
        HPAS,
        horizontalPodAutoscaler('web', 'web', { maxReplicas: 3 }, 'shop'),
      );
      const job = await newJob(createClaims(['data-web-2', 'data-web-3']));

      const result = await runHoldingLease(job);

      expect(claimDeletes()).toEqual(['data-web-3']);
      expect(result.summary.skipped).toEqual([
        expect.objectContaining({
          name: 'data-web-2',
          reason: expect.stringMatching(
            /^it is no longer an orphan: .*HorizontalPodAutoscaler web/,
          ),
        }),
      ]);
    });

    it('stops before its deletes when an HPA of the StatefulSet is created after the claims were checked', async () => {
      const job = await newJob(createClaims(['data-web-1', 'data-web-5']));
      const listPods = gateway.listPods.bind(gateway);
      jest.spyOn(gateway, 'listPods').mockImplementation(async (...args) => {
        const pods = await listPods(...args);
        // Its watch event is on the wire before the deletes would be.
        if (!sim.store.get(HPAS, 'shop', 'web'))
          sim.store.create(
            HPAS,
            horizontalPodAutoscaler('web', 'web', { maxReplicas: 8 }, 'shop'),
          );
        return pods;
      });

      const result = await runHoldingLease(job);

      expect(claimDeletes()).toEqual([]);
      expect(result.status).toBe('aborted');
      expect(result.reason).toBe(
        'HorizontalPodAutoscaler shop/web was created during the job and scales StatefulSet shop/web up to 8 replicas',
      );
    });

    it('skips a claim whose name another StatefulSet of the namespace also fits, created after the claims were confirmed', async () => {
      const mine = statefulSet('ledger-db', { replicas: 1 }, 'shop');
      sim.store.create('apps/statefulsets', mine);
      const job = await createWebJob(
        store,
        createClaims(['data-ledger-db-1', 'data-ledger-db-2']),
        { statefulSet: 'ledger-db' },
      );
      // StatefulSet db's template data-ledger names data-ledger-db-2 (and -1) too.
      const db = statefulSet('db', { replicas: 0 }, 'shop');
      db.spec.volumeClaimTemplates[0].metadata.name = 'data-ledger';
      sim.store.create('apps/statefulsets', db);
      try {
        const result = await runHoldingLease(job);
        expect(claimDeletes()).toEqual([]);
        expect(result.summary.skipped.map(s => s.reason)).toEqual([
          'it is no longer an orphan: its name is also that of a claim of StatefulSet db (template data-ledger), so its name cannot tell whose it is; it is kept',
          'it is no longer an orphan: its name is also that of a claim of StatefulSet db (template data-ledger), so its name cannot tell whose it is; it is kept',
        ]);
      } finally {
        sim.store.delete('apps/statefulsets', 'shop', 'db', {});
        sim.store.delete('apps/statefulsets', 'shop', 'ledger-db', {});
      }
    });

    it.each<['keep' | 'offer', string[], string]>([
      ['keep', [], 'skipped'],
      ['offer', ['data-web-1'], 'deleted'],
    ])(
      'with pausedStatefulSets %s, the claims of a StatefulSet at 0 replicas are %s',
      async (paused, deleted) => {
        const sts = structuredClone(
          sim.store.require('apps/statefulsets', 'shop', 'web'),
        );
        sts.spec.replicas = 0;
        sim.store.update('apps/statefulsets', sts);
        try {
          const job = await newJob(createClaims(['data-web-1']));
          await new PruneRunner(
            store,
            new JobEvents(store),
            new VolumeFollower(500),
            { renewIntervalMs: 60_000, pausedStatefulSets: paused },
          ).run(job, gateway, await holdLease(job.id));
          expect(claimDeletes()).toEqual(deleted);
        } finally {
          const back = structuredClone(
            sim.store.require('apps/statefulsets', 'shop', 'web'),
          );
          back.spec.replicas = 1;
          sim.store.update('apps/statefulsets', back);
        }
      },
    );
  });

  describe('guards of other concerns', () => {
    /** A guard whose live read, as it is made right before the deletes, finds a reason to stop. */
    function guardStoppingAtLiveRead(reason: string) {
      const calls: string[] = [];
      const guard: DeleteGuard & { reason?: string } = {
        get abortReason() {
          return guard.reason;
        },
        confirmLive: async () => {
          calls.push('confirmLive');
          guard.reason = reason;
        },
        stop: () => calls.push('stop'),
      };
      const factory: DeleteGuardFactory = {
        start: async () => {
          calls.push('start');
          return guard;
        },
      };
      return { factory, calls };
    }

    it('stops before any delete when a guard’s live read, made with the pod list, finds a reason; the reason is the job’s', async () => {
      const job = await newJob(createClaims(['data-web-1', 'data-web-2']));
      const { factory, calls } = guardStoppingAtLiveRead(
        'StatefulSet shop/web is now also claimed by component:default/ledger',
      );

      const result = await new PruneRunner(
        store,
        new JobEvents(store),
        new VolumeFollower(500),
        { renewIntervalMs: 60_000 },
        [factory],
      ).run(job, gateway, await holdLease(job.id));

      expect(claimDeletes()).toEqual([]);
      expect(result.status).toBe('aborted');
      expect(result.reason).toBe(
        'StatefulSet shop/web is now also claimed by component:default/ledger',
      );
      expect(result.summary.skipped.map(s => s.reason)).toEqual([
        'not attempted: the job stopped because StatefulSet shop/web is now also claimed by component:default/ledger',
        'not attempted: the job stopped because StatefulSet shop/web is now also claimed by component:default/ledger',
      ]);
      expect(calls).toEqual(['start', 'confirmLive', 'stop']);
    });
  });

  describe('fencing: it proves it holds the Lease before each delete', () => {
    afterEach(() => jest.restoreAllMocks());

    /**
     * Runs the job holding its Lease, this process frozen past the lease
     * (31 s of 30) right after the `nth` pod check; `meanwhile` happens while
     * it is frozen. The cluster's request log starts with the run.
     */
    async function runFrozenAfterPodCheck(
      job: PruneJob,
      nth: number,
      meanwhile: () => void = () => {},
    ) {
      const { lease, freezeFor } = await holdLeaseWhileFrozen(job.id);
      freezeAfterPodCheck(nth, () => {
        freezeFor(31_000);
        meanwhile();
      });
      sim.clearRequests();
      return runner(new JobEvents(store)).run(job, gateway, lease);
    }

    it('a process frozen past its lease right before its first delete wakes up, finds another holder, and deletes nothing', async () => {
      const job = await newJob(createClaims(['data-web-1', 'data-web-2']));

      // SIGSTOP for longer than the lease; another replica took it meanwhile.
      const result = await runFrozenAfterPodCheck(job, 1, stealLease);

      expect(claimDeletes()).toEqual([]);
      expectAbortedForJob2(result);
      expect(result.summary.deleted).toEqual([]);
      expect(result.summary.skipped.map(s => s.name)).toEqual([
        'data-web-1',
        'data-web-2',
      ]);
      expect(result.summary.skipped[0].reason).toMatch(
        /^not attempted: the job stopped because the lease shop\/pvc-pruner-web is now held by/,
      );
    });

    it('a process frozen after its last lease check, before the delete left, does not send it (a 170-scenario campaign run, seed 2877260753)', async () => {
      const job = await newJob(createClaims(['data-web-1', 'data-web-2']));
      const { lease, freezeFor } = await holdLeaseWhileFrozen(job.id);
      const isFresh = lease.isFresh.bind(lease);
      let checks = 0;
      jest.spyOn(lease, 'isFresh').mockImplementation(() => {
        const fresh = isFresh();
        // SIGSTOP right after the first check said fresh; another replica took the Lease meanwhile.
        if (++checks === 1) {
          freezeFor(31_000);
          stealLease();
        }
        return fresh;
      });

      const result = await runner(new JobEvents(store)).run(
        job,
        gateway,
        lease,
      );

      expect(claimDeletes()).toEqual([]);
      expectAbortedForJob2(result);
      expect(result.summary.deleted).toEqual([]);
      expect(result.summary.failed).toEqual([]);
    });

    it('a process frozen after its last lease check while nobody took the lease renews it, checks the claim again, and then deletes it', async () => {
      const job = await newJob(createClaims(['data-web-1']));
      const { lease, freezeFor } = await holdLeaseWhileFrozen(job.id);
      const isFresh = lease.isFresh.bind(lease);
      let checks = 0;
      jest.spyOn(lease, 'isFresh').mockImplementation(() => {
        const fresh = isFresh();
        if (++checks === 1) freezeFor(31_000);
        return fresh;
      });
      sim.clearRequests();

      const result = await runner(new JobEvents(store)).run(
        job,
        gateway,
        lease,
      );

      expect(result.status).toBe('succeeded');
      expect(claimDeletes()).toEqual(['data-web-1']);
      const requests = sim.requests();
      const renewal = requests.findIndex(
        r => r.resource === 'leases' && r.method === 'PUT',
      );
      const claimReads = requests.filter(
        r => r.verb === 'get' && r.resource === 'persistentvolumeclaims',
      );
      expect(renewal).toBeGreaterThan(-1);
      expect(claimReads.length).toBeGreaterThanOrEqual(2);
    });

    it('a process frozen between two deletes stops before the second', async () => {
      const job = await newJob(
        createClaims(['data-web-1', 'data-web-2', 'data-web-3']),
      );
      const { lease, freezeFor } = await holdLeaseWhileFrozen(job.id);
      // Frozen right after the first delete left, before the next: another replica took the Lease meanwhile.
      const deleteClaim = gateway.deleteClaim.bind(gateway);
      let sent = 0;
      jest
        .spyOn(gateway, 'deleteClaim')
        .mockImplementation((ns, name, preconditions, dryRun, beforeSend) =>
          deleteClaim(ns, name, preconditions, dryRun, () => {
            beforeSend?.();
            if (++sent === 1) {
              freezeFor(31_000);
              stealLease();
            }
          }),
        );
      sim.clearRequests();

      const result = await runner(new JobEvents(store)).run(
        job,
        gateway,
        lease,
      );

      expect(claimDeletes()).toEqual(['data-web-1']);
      expect(result.status).toBe('aborted');
      expect(result.summary.deleted.map(d => d.name)).toEqual(['data-web-1']);
      const finished = (await store.listEvents(job.id)).filter(
        e => e.type === 'job-finished',
      );
      expect(finished).toEqual([
        expect.objectContaining({
          status: 'aborted',
          message: expect.stringMatching(
            /^Prune aborted: 1 deleted, 2 skipped, 0 failed\. the lease shop\/pvc-pruner-web is now held by user:default\/bob/,
          ),
        }),
      ]);
    });

    it('a process frozen while nobody took its lease renews it on waking, checks the claim again, and carries on', async () => {
      const job = await newJob(createClaims(['data-web-1', 'data-web-2']));

      const result = await runFrozenAfterPodCheck(job, 1);

      expect(result.status).toBe('succeeded');
      expect(claimDeletes()).toEqual(['data-web-1', 'data-web-2']);
      // One renewal on waking, then both claims were read again before their deletes.
      const requests = sim.requests();
      const renewal = requests.findIndex(
        r => r.resource === 'leases' && r.method === 'PUT',
      );
      const firstDelete = requests.findIndex(r => r.verb === 'delete');
      expect(renewal).toBeGreaterThan(-1);
      expect(
        requests
          .slice(renewal, firstDelete)
          .filter(
            r => r.verb === 'get' && r.resource === 'persistentvolumeclaims',
          ),
      ).toHaveLength(2);
    });
  });
});
