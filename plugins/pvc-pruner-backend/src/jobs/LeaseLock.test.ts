import { ConflictError } from '@backstage/errors';
import { withWallClockSkew } from '../__testUtils__/wallClock';
import { KubeSim } from 'kube-sim';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import { PruneJobStore } from '../database';
import { startMemoryJobStore } from '../__testUtils__/memoryJobStore';
import { KubeGateway } from '../kubernetes';
import {
  HOLDER_ANNOTATION,
  JOB_ANNOTATION,
  LeaseLock,
  LeaseLostError,
  REQUESTED_BY_ANNOTATION,
} from './LeaseLock';

/* LeaseLock against the simulator's Lease API (no controllers needed), on the clock of a real (SQLite) job store. */

let sim: KubeSim;
let gateway: KubeGateway;
let closeStore: () => Promise<void>;
let clock: PruneJobStore;

/** A replica's lock: `monotonicNow` stands for its own monotonic clock. */
const lock = (
  leaseDurationSeconds: number,
  holderPrefix: string,
  monotonicNow?: () => number,
) => new LeaseLock({ leaseDurationSeconds, holderPrefix, clock, monotonicNow });

const target = (
  overrides: Partial<Parameters<LeaseLock['acquire']>[1]> = {},
) => ({
  namespace: 'shop',
  statefulSet: 'orders-db',
  jobId: 'job-1',
  requestedBy: 'user:default/alice',
  dryRun: false,
  ...overrides,
});

/**
 * Acquires a 30 s lease as backstage-a on a monotonic clock that starts at
 * `start` and moves only by `advance(ms)`: time passing, or a frozen process.
 */
async function acquireOnTestClock(start: number) {
  let monotonic = start;
  const held = await lock(30, 'backstage-a', () => monotonic).acquire(
    gateway,
    target(),
  );
  return {
    held,
    advance: (ms: number) => {
      monotonic += ms;
    },
  };
}

const leaseInSim = () =>
  sim.store.get('coordination.k8s.io/leases', 'shop', 'pvc-pruner-orders-db');

beforeAll(async () => {
  ({ sim, gateway } = await startShopSimulator());
  ({ store: clock, close: closeStore } = await startMemoryJobStore());
});

afterAll(async () => {
  await sim.close();
  await closeStore();
});

afterEach(() => {
  const lease = leaseInSim();
  if (lease)
    sim.store.delete(
      'coordination.k8s.io/leases',
      'shop',
      lease.metadata.name,
      { gracePeriodSeconds: 0 },
    );
  sim.clearRequests();
});

/** Another replica's job takes the lease over, as LeaseLock does after expiry. */
function steal(holderIdentity: string, requestedBy: string, jobId: string) {
  const stolen = structuredClone(leaseInSim()!);
  stolen.spec.holderIdentity = holderIdentity;
  stolen.metadata.annotations = {
    [REQUESTED_BY_ANNOTATION]: requestedBy,
    [JOB_ANNOTATION]: jobId,
    [HOLDER_ANNOTATION]: holderIdentity,
  };
  sim.store.update('coordination.k8s.io/leases', stolen);
}

/** Another holder (a tool, a hand edit) takes the lease by its holderIdentity alone, leaving our annotations. */
function takeOverLeavingAnnotations(holderIdentity: string) {
  const taken = structuredClone(leaseInSim()!);
  taken.spec.holderIdentity = holderIdentity;
  taken.spec.acquireTime = new Date().toISOString();
  taken.spec.renewTime = taken.spec.acquireTime;
  sim.store.update('coordination.k8s.io/leases', taken);
}

const leaseWrites = () =>
  sim.requests().filter(r => r.resource === 'leases' && r.method === 'PUT');

describe('LeaseLock', () => {
  it('creates the lease pvc-pruner-<statefulset>, saying who holds it for which job, and releases it', async () => {
    const held = await lock(30, 'backstage-a').acquire(gateway, target());

    expect(held).toMatchObject({
      name: 'pvc-pruner-orders-db',
      namespace: 'shop',
    });
    const lease = leaseInSim()!;
    expect(lease.metadata.annotations).toEqual({
      [REQUESTED_BY_ANNOTATION]: 'user:default/alice',
      [JOB_ANNOTATION]: 'job-1',
      [HOLDER_ANNOTATION]: 'backstage-a/job-1',
    });
    expect(lease.spec).toMatchObject({
      holderIdentity: 'backstage-a/job-1',
      leaseDurationSeconds: 30,
    });

    await held.release();
    expect(leaseInSim()).toBeUndefined();
    const release = sim.requests().find(r => r.method === 'DELETE')!;
    expect(release.status).toBe(200);
  });

  it('refuses a second holder with a ConflictError naming the first, its job, and since when', async () => {
    await lock(30, 'backstage-a').acquire(gateway, target());

    const second = lock(30, 'backstage-b').acquire(
      gateway,
      target({ jobId: 'job-2', requestedBy: 'user:default/bob' }),
    );

    await expect(second).rejects.toThrow(ConflictError);
    await expect(second).rejects.toThrow(
      /^StatefulSet shop\/orders-db is being pruned by user:default\/alice \(job job-1\) since \d{4}-\d\d-\d\dT/,
    );
    // A dry run is refused too, while the lock is held.
    await expect(
      lock(30, 'backstage-b').acquire(
        gateway,
        target({ jobId: 'job-3', dryRun: true }),
      ),
    ).rejects.toThrow(ConflictError);
  });

  it('takes over an expired lease with a conditional update, counting the transition', async () => {
    await lock(1, 'backstage-a').acquire(gateway, target());
    await new Promise(r => setTimeout(r, 1100));

    const held = await lock(30, 'backstage-b').acquire(
      gateway,
      target({ jobId: 'job-2', requestedBy: 'user:default/bob' }),
    );

    const lease = leaseInSim()!;
    expect(lease.spec).toMatchObject({
      holderIdentity: 'backstage-b/job-2',
      leaseTransitions: 1,
      leaseDurationSeconds: 30,
    });
    expect(lease.metadata.annotations?.[JOB_ANNOTATION]).toBe('job-2');
    expect(sim.requests().filter(r => r.method === 'PUT')).toHaveLength(1);
    await held.release();
  });

  it('renews by updating renewTime, and fails to renew once someone else has taken the lease', async () => {
    const held = await lock(30, 'backstage-a').acquire(gateway, target());
    const first = new Date(leaseInSim()!.spec.renewTime).getTime();
    await new Promise(r => setTimeout(r, 20));

    await held.renew();
    expect(new Date(leaseInSim()!.spec.renewTime).getTime()).toBeGreaterThan(
      first,
    );

    // Someone else rewrites the lease: our next renewal is a conflict, not a silent overwrite.
    steal('backstage-b/job-2', 'user:default/bob', 'job-2');
    const renewal = held.renew();
    await expect(renewal).rejects.toThrow(LeaseLostError);
    await expect(renewal).rejects.toThrow(
      /^the lease shop\/pvc-pruner-orders-db is now held by user:default\/bob \(job job-2\)/,
    );
    // Nor does its release delete the other holder's lease.
    await held.release().catch(() => undefined);
    expect(leaseInSim()?.spec.holderIdentity).toBe('backstage-b/job-2');
  });

  it('names the holderIdentity of a holder that took the lease without rewriting our annotations, never the job those annotations name', async () => {
    const { held, advance } = await acquireOnTestClock(0);
    // Frozen past the lease; another holder took it, leaving alice's annotations for job-1 in place.
    advance(31_000);
    takeOverLeavingAnnotations('other-operator-7c9f');

    const lost = held.confirm();

    await expect(lost).rejects.toThrow(
      /^the lease shop\/pvc-pruner-orders-db is now held by other-operator-7c9f since \d{4}-\d\d-\d\dT/,
    );
    await expect(lost).rejects.not.toThrow(/alice|job-1/);
  });

  it('refuses a second prune with a 409 naming the holderIdentity when the annotations belong to an earlier holder', async () => {
    await lock(30, 'backstage-a').acquire(gateway, target());
    takeOverLeavingAnnotations('other-operator-7c9f');

    const second = lock(30, 'backstage-b').acquire(
      gateway,
      target({ jobId: 'job-2', requestedBy: 'user:default/bob' }),
    );

    await expect(second).rejects.toThrow(ConflictError);
    await expect(second).rejects.toThrow(
      /^StatefulSet shop\/orders-db is being pruned by other-operator-7c9f since \d{4}-/,
    );
  });

  it('quotes a hostile holderIdentity at most 253 characters long, and an unreadable acquireTime as unknown', async () => {
    await lock(30, 'backstage-a').acquire(gateway, target());
    takeOverLeavingAnnotations('x'.repeat(10_000));
    const taken = structuredClone(leaseInSim()!);
    taken.spec.acquireTime = 'not a time';
    sim.store.update('coordination.k8s.io/leases', taken);

    const second = lock(30, 'backstage-b').acquire(
      gateway,
      target({ jobId: 'job-2' }),
    );

    await expect(second).rejects.toThrow(
      new RegExp(`being pruned by x{253}… since an unknown time$`),
    );
  });

  it('dry run checks that the lock is free but does not hold it (its create is a dry run)', async () => {
    const held = await lock(30, 'backstage-a').acquire(
      gateway,
      target({ dryRun: true }),
    );

    expect(leaseInSim()).toBeUndefined();
    const writes = sim.requests().filter(r => r.method !== 'GET');
    expect(
      writes.map(w => [w.method, new URLSearchParams(w.query).get('dryRun')]),
    ).toEqual([['POST', 'All']]);
    await held.renew();
    await held.release();
    expect(sim.requests().filter(r => r.method !== 'GET')).toHaveLength(1);
  });

  it('reports a lost race on create as a ConflictError naming the winner', async () => {
    // The lease appears between our read and our create.
    const lockB = lock(30, 'backstage-b');
    const readLease = gateway.readLease.bind(gateway);
    const spy = jest
      .spyOn(gateway, 'readLease')
      .mockImplementationOnce(async () => {
        await lock(30, 'backstage-a').acquire(gateway, target());
        spy.mockImplementation(readLease);
        return undefined;
      });

    await expect(
      lockB.acquire(
        gateway,
        target({ jobId: 'job-2', requestedBy: 'user:default/bob' }),
      ),
    ).rejects.toThrow(
      /^StatefulSet shop\/orders-db is being pruned by user:default\/alice \(job job-1\)/,
    );
    spy.mockRestore();
  });

  it('judges expiry by the shared (database) clock: a replica whose own clock runs an hour fast cannot take a live lease', async () => {
    await lock(30, 'backstage-a').acquire(gateway, target());

    // Replica B's wall clock is an hour ahead.

    await withWallClockSkew(60 * 60_000, async () => {
      await expect(
        lock(30, 'backstage-b').acquire(
          gateway,
          target({ jobId: 'job-2', requestedBy: 'user:default/bob' }),
        ),
      ).rejects.toThrow(ConflictError);
    });
    expect(leaseInSim()?.spec.holderIdentity).toBe('backstage-a/job-1');
  });

  it('confirms for free while its last renewal is recent, and renews first once two thirds of the duration have passed', async () => {
    const { held, advance } = await acquireOnTestClock(1_000_000);
    sim.clearRequests();

    advance(19_000);
    expect(held.isFresh()).toBe(true);
    await held.confirm();
    expect(leaseWrites()).toHaveLength(0);

    advance(2_000); // 21 s of 30 since the lease was taken
    expect(held.isFresh()).toBe(false);
    await held.confirm();
    expect(leaseWrites()).toHaveLength(1);
    expect(held.isFresh()).toBe(true);
    await held.release();
  });

  it('a holder frozen past its lease wakes up stale, and its confirmation fails once another replica holds the lease', async () => {
    const { held, advance } = await acquireOnTestClock(0);

    // SIGSTOP for longer than the lease; meanwhile another replica took the lease over.
    advance(31_000);
    steal('backstage-b/job-2', 'user:default/bob', 'job-2');

    expect(held.isFresh()).toBe(false);
    await expect(held.confirm()).rejects.toThrow(
      /^the lease shop\/pvc-pruner-orders-db is now held by user:default\/bob \(job job-2\)/,
    );
    expect(held.isFresh()).toBe(false);
    // Its release leaves the new holder's lease alone.
    await held.release().catch(() => undefined);
    expect(leaseInSim()?.spec.holderIdentity).toBe('backstage-b/job-2');
  });

  it('fails confirmation, rather than trusting a stale renewal, when the API server cannot be reached', async () => {
    const { held, advance } = await acquireOnTestClock(0);
    advance(25_000);
    sim.addFault({ verb: 'update', resource: 'leases', status: 503 });
    try {
      await expect(held.confirm()).rejects.toThrow(
        /^the lease shop\/pvc-pruner-orders-db could not be renewed within its duration \(cluster "demo" refused update lease/,
      );
    } finally {
      sim.clearFaults();
    }
    await held.release();
  });

  it('keeps the lease when an earlier renewal went through but its answer was lost (same holder, newer resourceVersion)', async () => {
    const held = await lock(30, 'backstage-a').acquire(gateway, target());
    // The server applied a renewal whose response never arrived.
    const renewedByUs = structuredClone(leaseInSim()!);
    renewedByUs.spec.renewTime = new Date().toISOString();
    sim.store.update('coordination.k8s.io/leases', renewedByUs);

    await held.renew();

    expect(leaseInSim()?.spec.holderIdentity).toBe('backstage-a/job-1');
    await held.release();
    expect(leaseInSim()).toBeUndefined();
  });
});
