import { ConflictError } from '@backstage/errors';
import { KubeSim } from 'kube-sim';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import { KubeGateway } from '../kubernetes';
import {
  JOB_ANNOTATION,
  LeaseLock,
  REQUESTED_BY_ANNOTATION,
} from './LeaseLock';

/* LeaseLock against the simulator's Lease API (no controllers needed). */

let sim: KubeSim;
let gateway: KubeGateway;

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

const leaseInSim = () =>
  sim.store.get('coordination.k8s.io/leases', 'shop', 'pvc-pruner-orders-db');

beforeAll(async () => {
  ({ sim, gateway } = await startShopSimulator());
});

afterAll(async () => {
  await sim.close();
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

describe('LeaseLock', () => {
  it('creates the lease pvc-pruner-<statefulset>, saying who holds it for which job, and releases it', async () => {
    const held = await new LeaseLock(30, 'backstage-a').acquire(
      gateway,
      target(),
    );

    expect(held).toMatchObject({
      name: 'pvc-pruner-orders-db',
      namespace: 'shop',
    });
    const lease = leaseInSim()!;
    expect(lease.metadata.annotations).toEqual({
      [REQUESTED_BY_ANNOTATION]: 'user:default/alice',
      [JOB_ANNOTATION]: 'job-1',
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
    await new LeaseLock(30, 'backstage-a').acquire(gateway, target());

    const second = new LeaseLock(30, 'backstage-b').acquire(
      gateway,
      target({ jobId: 'job-2', requestedBy: 'user:default/bob' }),
    );

    await expect(second).rejects.toThrow(ConflictError);
    await expect(second).rejects.toThrow(
      /^StatefulSet shop\/orders-db is being pruned by user:default\/alice \(job job-1\) since \d{4}-\d\d-\d\dT/,
    );
    // A dry run is refused too, while the lock is held.
    await expect(
      new LeaseLock(30, 'backstage-b').acquire(
        gateway,
        target({ jobId: 'job-3', dryRun: true }),
      ),
    ).rejects.toThrow(ConflictError);
  });

  it('takes over an expired lease with a conditional update, counting the transition', async () => {
    await new LeaseLock(1, 'backstage-a').acquire(gateway, target());
    await new Promise(r => setTimeout(r, 1100));

    const held = await new LeaseLock(30, 'backstage-b').acquire(
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
    const held = await new LeaseLock(30, 'backstage-a').acquire(
      gateway,
      target(),
    );
    const first = new Date(leaseInSim()!.spec.renewTime).getTime();
    await new Promise(r => setTimeout(r, 20));

    await held.renew();
    expect(new Date(leaseInSim()!.spec.renewTime).getTime()).toBeGreaterThan(
      first,
    );

    // Someone else rewrites the lease: our next renewal is a conflict, not a silent overwrite.
    const stolen = structuredClone(leaseInSim()!);
    stolen.spec.holderIdentity = 'someone-else';
    sim.store.update('coordination.k8s.io/leases', stolen);
    await expect(held.renew()).rejects.toThrow(/409/);
    // Nor does its release delete the other holder's lease.
    await held.release().catch(() => undefined);
    expect(leaseInSim()?.spec.holderIdentity).toBe('someone-else');
  });

  it('dry run checks that the lock is free but does not hold it (its create is a dry run)', async () => {
    const held = await new LeaseLock(30, 'backstage-a').acquire(
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
    const lock = new LeaseLock(30, 'backstage-b');
    const readLease = gateway.readLease.bind(gateway);
    const spy = jest
      .spyOn(gateway, 'readLease')
      .mockImplementationOnce(async () => {
        await new LeaseLock(30, 'backstage-a').acquire(gateway, target());
        spy.mockImplementation(readLease);
        return undefined;
      });

    await expect(
      lock.acquire(
        gateway,
        target({ jobId: 'job-2', requestedBy: 'user:default/bob' }),
      ),
    ).rejects.toThrow(
      /^StatefulSet shop\/orders-db is being pruned by user:default\/alice \(job job-1\)/,
    );
    spy.mockRestore();
  });
});
