import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeSim } from 'kube-sim';
import {
  pruneAll,
  Pruner,
  readSse,
  sleep,
  startPruner,
  startSim,
  statefulSetIn,
  waitFor,
} from './__testUtils__/harness';

jest.setTimeout(30000);

describe('a backend that stops mid-job', () => {
  let sim: KubeSim;
  let dir: string;
  const pruners: Pruner[] = [];

  afterEach(async () => {
    for (const p of pruners.splice(0)) await p.stop().catch(() => undefined);
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('leaves a job that the next backend on the same database marks interrupted, with a job-finished event', async () => {
    dir = mkdtempSync(join(tmpdir(), 'pvc-pruner-restart-'));
    // A SQLite file database, shared by both backends as by two runs of one Backstage.
    const database = {
      client: 'better-sqlite3',
      connection: { directory: dir },
    };
    const pvcPruner = { leaseDurationSeconds: 2 };
    sim = await startSim();
    const first = await startPruner({ sim, database, pvcPruner });
    pruners.push(first);
    expect(readdirSync(dir)).toEqual(['pvc-pruner.sqlite']);
    const sts = statefulSetIn(await first.scan(), 'shop', 'orders-db');
    // Every deletion takes 2 s: the job is nowhere near done when its backend stops.
    sim.addFault({
      verb: 'delete',
      resource: 'persistentvolumeclaims',
      latencyMs: 2000,
    });
    const id = await first.prune(pruneAll(sts));
    await waitFor(
      'the job to run',
      async () =>
        (await first.get(`/v1/prune-jobs/${id}`)).body.status === 'running',
    );
    await first.stop();
    pruners.splice(0);

    const second = await startPruner({ sim, database, pvcPruner });
    pruners.push(second);
    const job = await second.waitForJob(id, 10000);

    expect(job.status).toBe('interrupted');
    // Either the stopping backend interrupted its own job before the next delete,
    // or (if it could no longer write) the next backend's sweep did.
    expect(job.reason).toMatch(/shut down|stopped before it finished/);
    expect(job.finishedAt).toBeDefined();
    // The stream on the new backend replays the job to its end and closes.
    const frames = await readSse(
      `${second.baseUrl}/v1/prune-jobs/${id}/events`,
    );
    const last = frames[frames.length - 1].data;
    expect(last).toMatchObject({ type: 'job-finished', status: 'interrupted' });
    expect(frames.filter(f => f.data.type === 'job-finished')).toHaveLength(1);
    expect(frames.map(f => f.data.seq)).toEqual(frames.map((_, i) => i + 1));
    // The StatefulSet is not locked forever: a new dry run is accepted once the lease has expired.
    sim.clearFaults();
    const again = await waitFor(
      'a new prune to be accepted',
      async () => {
        const res = await second.post('/v1/prune-jobs', pruneAll(sts, true));
        return res.status === 202 ? res : undefined;
      },
      8000,
      250,
    );
    expect((await second.waitForJob(again.body.id)).status).toBeDefined();
  });

  it('on shutdown, lets a running job stop before its next delete, records it interrupted with the reason, and releases its Lease', async () => {
    dir = mkdtempSync(join(tmpdir(), 'pvc-pruner-shutdown-'));
    const database = {
      client: 'better-sqlite3',
      connection: { directory: dir },
    };
    // A long lease: only its release lets the StatefulSet be pruned again at once.
    const pvcPruner = { leaseDurationSeconds: 60 };
    sim = await startSim();
    const first = await startPruner({ sim, database, pvcPruner });
    pruners.push(first);
    const sts = statefulSetIn(await first.scan(), 'shop', 'orders-db');
    sim.addFault({
      verb: 'delete',
      resource: 'persistentvolumeclaims',
      latencyMs: 1000,
    });
    const deletes = () =>
      sim
        .requests()
        .filter(
          r => r.verb === 'delete' && r.resource === 'persistentvolumeclaims',
        ).length;
    const id = await first.prune(pruneAll(sts));
    // Read the job's stream until its first delete goes out.
    const untilFirstDelete = new AbortController();
    await readSse(`${first.baseUrl}/v1/prune-jobs/${id}/events`, {
      signal: untilFirstDelete.signal,
      onFrame: frame => {
        if (frame.data.type === 'pvc-deleting') untilFirstDelete.abort();
      },
    }).catch(e => {
      if (!untilFirstDelete.signal.aborted) throw e;
    });

    await first.stop();
    pruners.splice(0);

    // Stopped means done: the job is recorded and its Lease is gone.
    expect(
      sim.store.get(
        'coordination.k8s.io/leases',
        'shop',
        'pvc-pruner-orders-db',
      ),
    ).toBeUndefined();
    const sentBeforeStop = deletes();
    expect(sentBeforeStop).toBeLessThanOrEqual(1);
    const second = await startPruner({ sim, database, pvcPruner });
    pruners.push(second);
    const job = (await second.get(`/v1/prune-jobs/${id}`)).body;
    expect(job).toMatchObject({
      status: 'interrupted',
      reason:
        'Interrupted: the Backstage instance running this job shut down; run a new scan',
    });
    expect(job.summary.skipped.length).toBeGreaterThanOrEqual(
      sts.orphans.length - 1,
    );
    await sleep(1500);
    expect(deletes()).toBe(sentBeforeStop);
    sim.clearFaults();
    const again = await second.post('/v1/prune-jobs', pruneAll(sts, true));
    expect(again.status).toBe(202);
  });
});
