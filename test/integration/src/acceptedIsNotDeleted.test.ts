import type { KubeSim } from 'kube-sim';
import {
  claimOf,
  ORDERS_DB_ORPHANS,
  ORDERS_REF,
  pruneAll,
  Pruner,
  startPruner,
  startSim,
  statefulSetIn,
} from './__testUtils__/harness';

jest.setTimeout(30000);

const HOLD = 'acc.example/backup-hold';
const HELD = 'data-orders-db-2';
const GI20 = 20 * 2 ** 30;

/** A backup tool's finalizer on one orphan, as a user's cluster may have: its deletion is accepted but waits. */
function holdForBackup(sim: KubeSim, name: string) {
  const claim = structuredClone(claimOf(sim, 'shop', name)!);
  claim.metadata.finalizers = [...(claim.metadata.finalizers ?? []), HOLD];
  sim.store.update('persistentvolumeclaims', claim);
}

describe('a claim whose deletion is accepted but held by a foreign finalizer', () => {
  let sim: KubeSim;
  let pruner: Pruner;

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  it('is reported as still terminating with its finalizers, never as deleted, in the job, its events, the history and the next scan', async () => {
    sim = await startSim();
    holdForBackup(sim, HELD);
    pruner = await startPruner({
      sim,
      pvcPruner: { volumeWaitTimeoutSeconds: 2 },
    });
    const sts = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');

    const id = await pruner.prune(pruneAll(sts));
    const job = await pruner.waitForJob(id);

    // The claim is still there, Terminating.
    expect(
      claimOf(sim, 'shop', HELD)?.metadata.deletionTimestamp,
    ).toBeDefined();
    const reclaimed = ORDERS_DB_ORPHANS.filter(n => n !== HELD);
    expect(job.status).toBe('incomplete');
    expect(job.reason).toBe(
      `Not everything was reclaimed: ${HELD} is still terminating, held by ${HOLD}`,
    );
    expect(job.summary.deleted.map(d => d.name).sort()).toEqual(reclaimed);
    expect(job.summary.terminating).toEqual([
      expect.objectContaining({ name: HELD, finalizers: [HOLD] }),
    ]);
    expect(job.summary.bytesReclaimed).toBe(reclaimed.length * GI20);

    const events = await pruner.events(id);
    expect(
      events.filter(e => e.pvc === HELD).map(e => [e.type, e.message]),
    ).toEqual([
      [
        'pvc-deleting',
        `Deleting ${HELD} once a last check shows it is still an orphan`,
      ],
      [
        'pvc-terminating',
        `${HELD} is still terminating: held by ${HOLD}; it is not deleted until that finalizer is removed`,
      ],
    ]);
    expect(events[events.length - 1]).toMatchObject({
      type: 'job-finished',
      status: 'incomplete',
      message: `Prune incomplete: 4 deleted, 1 still terminating, 0 skipped, 0 failed. Not everything was reclaimed: ${HELD} is still terminating, held by ${HOLD}`,
    });

    // The history says the same.
    const history = await pruner.get(
      `/v1/prune-jobs?entityRef=${encodeURIComponent(ORDERS_REF)}`,
    );
    expect(history.body.items[0]).toMatchObject({
      id,
      status: 'incomplete',
      summary: { terminating: [expect.objectContaining({ name: HELD })] },
    });

    // The next scan does not offer it again: it is kept, as terminating, with what holds it.
    const after = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');
    expect(after.orphans).toEqual([]);
    expect(after.kept).toEqual([
      expect.objectContaining({
        name: HELD,
        reason: 'terminating',
        finalizers: [HOLD],
      }),
      ...after.kept.filter(k => k.name !== HELD),
    ]);
    expect(after.reclaimableBytes).toBe(0);
  });
});
