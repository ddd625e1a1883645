import type { KubeSim } from 'kube-sim';
import { snapshotNames } from 'kube-sim';
import {
  claimOf,
  kubectl,
  ORDERS_DB_ORPHANS,
  ORDERS_REF,
  pruneAll,
  Pruner,
  startPruner,
  startSim,
  statefulSetIn,
  waitFor,
  writesTo,
} from './__testUtils__/harness';

jest.setTimeout(30000);

const GI20 = 20 * 2 ** 30;
const DAY_MS = 86_400_000;
const SOURCE_PROTECTION = snapshotNames.PVC_AS_SOURCE_PROTECTION;

/** The claims' uids as the cluster has them, by name. */
function uidsOf(sim: KubeSim, names: string[]): Map<string, string> {
  return new Map(
    names.map(name => [name, claimOf(sim, 'shop', name)!.metadata.uid]),
  );
}

/** The claim DELETEs the simulator received (dry runs included), by claim name. */
function claimDeletes(sim: KubeSim) {
  return sim
    .history!.claimDeletions()
    .filter(d => d.request.namespace === 'shop');
}

/** VolumeSnapshots in shop, as kubectl lists them. */
async function listedSnapshots(sim: KubeSim): Promise<any[]> {
  return JSON.parse(
    await kubectl(sim, ['-n', 'shop', 'get', 'volumesnapshot', '-o', 'json']),
  ).items;
}

describe('a prune that keeps a snapshot of each claim, judged from the simulator', () => {
  let sim: KubeSim;
  let pruner: Pruner;

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  async function start(
    snapshots: Record<string, unknown> = {},
    more: Record<string, unknown> = {},
  ) {
    sim = await startSim([], { recordHistory: true });
    pruner = await startPruner({
      sim,
      pvcPruner: { ...more, snapshots: { enabled: true, ...snapshots } },
    });
    return statefulSetIn(await pruner.scan(), 'shop', 'orders-db');
  }

  it('deletes each claim only after a ready snapshot of its uid exists, and leaves that snapshot labelled for a restore', async () => {
    const sts = await start();
    const uids = uidsOf(sim, ORDERS_DB_ORPHANS);
    const claims = new Map(
      ORDERS_DB_ORPHANS.map(n => [
        n,
        structuredClone(claimOf(sim, 'shop', n)!),
      ]),
    );
    const startedAt = Date.now();

    const id = await pruner.prune({ ...pruneAll(sts), snapshot: true });
    const job = await pruner.waitForJob(id);

    expect(job.status).toBe('succeeded');
    expect(job.summary.deleted.map(d => d.name).sort()).toEqual(
      ORDERS_DB_ORPHANS,
    );
    ORDERS_DB_ORPHANS.forEach(n =>
      expect(claimOf(sim, 'shop', n)).toBeUndefined(),
    );

    // The simulator's word: every claim's one DELETE met a ready snapshot of that claim's uid.
    const deletes = claimDeletes(sim);
    expect(deletes.map(d => d.request.name).sort()).toEqual(ORDERS_DB_ORPHANS);
    const snapshotOf = new Map<string, string>();
    for (const deletion of deletes) {
      const name = deletion.request.name!;
      expect(deletion.claim?.uid).toBe(uids.get(name));
      expect(deletion.readySnapshots).toHaveLength(1);
      const [ready] = deletion.readySnapshots!;
      expect(ready.readySince).toBeLessThan(deletion.request.at);
      // ...and the snapshot controller had lifted its hold by then.
      expect(deletion.claim?.finalizers).not.toContain(SOURCE_PROTECTION);
      snapshotOf.set(name, ready.name);
    }
    // The controller held each claim while its snapshot was taken.
    const created = sim
      .history!.snapshotEvents()
      .filter(e => e.event === 'created');
    expect(created.map(e => e.sourceClaim).sort()).toEqual(ORDERS_DB_ORPHANS);

    // The snapshots outlive their claims, as kubectl sees them.
    const listed = await listedSnapshots(sim);
    expect(listed.map(s => s.metadata.name).sort()).toEqual(
      [...snapshotOf.values()].sort(),
    );
    for (const snapshot of listed) {
      const claimName = snapshot.spec.source.persistentVolumeClaimName;
      const claim = claims.get(claimName)!;
      expect(snapshot.metadata.name).toBe(
        `${claimName}-${id.replace(/-/g, '').slice(0, 8)}`,
      );
      expect(snapshotOf.get(claimName)).toBe(snapshot.metadata.name);
      expect(snapshot.status).toMatchObject({
        readyToUse: true,
        restoreSize: '20Gi',
      });
      expect(snapshot.spec.volumeSnapshotClassName).toBe('sim-snapshots');
      expect(snapshot.metadata.labels).toEqual({
        'app.kubernetes.io/managed-by': 'pvc-pruner',
        'pvc-pruner.backstage.io/job': id,
        'pvc-pruner.backstage.io/claim-uid': uids.get(claimName),
        'pvc-pruner.backstage.io/statefulset': 'orders-db',
        'pvc-pruner.backstage.io/entity': expect.stringMatching(
          /^sha256-[0-9a-f]{56}$/,
        ),
      });
      const annotations = snapshot.metadata.annotations;
      expect(annotations).toMatchObject({
        'pvc-pruner.backstage.io/claim-name': claimName,
        'pvc-pruner.backstage.io/storage-class': 'standard',
        'pvc-pruner.backstage.io/requested-size':
          claim.spec.resources.requests.storage,
        'pvc-pruner.backstage.io/entity-ref': ORDERS_REF,
        'pvc-pruner.backstage.io/requested-by': 'user:default/alice',
      });
      expect(
        JSON.parse(annotations['pvc-pruner.backstage.io/claim-labels']),
      ).toEqual(claim.metadata.labels);
      expect(
        JSON.parse(annotations['pvc-pruner.backstage.io/access-modes']),
      ).toEqual(claim.spec.accessModes);
      const expiresAt = Date.parse(
        annotations['pvc-pruner.backstage.io/expires-at'],
      );
      expect(expiresAt).toBeGreaterThanOrEqual(startedAt + 7 * DAY_MS);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 7 * DAY_MS);

      // The job's outcome names the same snapshot.
      const outcome = job.summary.deleted.find(d => d.name === claimName)!;
      expect(outcome.snapshot).toEqual({
        name: snapshot.metadata.name,
        uid: snapshot.metadata.uid,
        contentName: snapshot.status.boundVolumeSnapshotContentName,
        restoreBytes: GI20,
        expiresAt: new Date(expiresAt).toISOString(),
      });
      expect(outcome.noSnapshot).toBeUndefined();
    }
    // Every snapshot the entity's label selects is this job's.
    const byLabel = JSON.parse(
      await kubectl(sim, [
        '-n',
        'shop',
        'get',
        'volumesnapshot',
        '-o',
        'json',
        '-l',
        `pvc-pruner.backstage.io/job=${id}`,
      ]),
    ).items;
    expect(byLabel).toHaveLength(ORDERS_DB_ORPHANS.length);
  });

  it('does not delete a claim whose snapshot fails, and ends incomplete naming it', async () => {
    const sts = await start();
    sim.addSnapshotBehaviour({
      namespace: 'shop',
      claim: 'data-orders-db-3',
      error: 'simulated driver failure: quota exceeded',
    });

    const job = await pruner.waitForJob(
      await pruner.prune({ ...pruneAll(sts), snapshot: true }),
    );

    const kept = 'data-orders-db-3';
    expect(job.status).toBe('incomplete');
    expect(job.reason).toContain(`${kept} was not deleted`);
    expect(job.reason).toContain('quota exceeded');
    expect(job.summary.skipped).toEqual([
      expect.objectContaining({
        name: kept,
        reason: expect.stringContaining('quota exceeded'),
      }),
    ]);
    expect(claimOf(sim, 'shop', kept)).toBeDefined();
    // No DELETE of it ever reached the cluster; every other one met a ready snapshot.
    const deletes = claimDeletes(sim);
    expect(deletes.map(d => d.request.name).sort()).toEqual(
      ORDERS_DB_ORPHANS.filter(n => n !== kept),
    );
    deletes.forEach(d => expect(d.readySnapshots).toHaveLength(1));
    // The failed snapshot is left as it is, with its error.
    const failed = (await listedSnapshots(sim)).find(
      s => s.spec.source.persistentVolumeClaimName === kept,
    );
    expect(failed.status.readyToUse).toBe(false);
    expect(failed.status.error.message).toContain('quota exceeded');
    const events = await pruner.events(job.id);
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'snapshot-failed', pvc: kept }),
      ]),
    );
  });

  it('does not delete a claim whose snapshot is not ready within timeoutSeconds', async () => {
    const sts = await start({ timeoutSeconds: 1 });
    // 5000 simulated seconds are 100 s here, far beyond the 1 s the job waits.
    sim.addSnapshotBehaviour({
      namespace: 'shop',
      claim: 'data-orders-db-4',
      readyAfterSeconds: 5000,
    });

    const job = await pruner.waitForJob(
      await pruner.prune({ ...pruneAll(sts), snapshot: true }),
    );

    const kept = 'data-orders-db-4';
    expect(job.status).toBe('incomplete');
    expect(job.reason).toContain(`${kept} was not deleted`);
    expect(job.reason).toContain('not ready within 1 s');
    expect(job.summary.skipped.map(s => s.name)).toEqual([kept]);
    expect(claimOf(sim, 'shop', kept)).toBeDefined();
    const deletes = claimDeletes(sim);
    expect(deletes.map(d => d.request.name).sort()).toEqual(
      ORDERS_DB_ORPHANS.filter(n => n !== kept),
    );
    deletes.forEach(d => expect(d.readySnapshots).toHaveLength(1));
    // Its snapshot is still being taken, holding the claim.
    expect(claimOf(sim, 'shop', kept)!.metadata.finalizers).toContain(
      SOURCE_PROTECTION,
    );
  });

  it('with required: true, deletes no claim whose volume has no VolumeSnapshotClass', async () => {
    const sts = await start({ required: true });
    sim.store.delete(
      snapshotNames.SNAPSHOT_CLASSES,
      undefined,
      'sim-snapshots',
    );

    const job = await pruner.waitForJob(
      await pruner.prune({ ...pruneAll(sts), snapshot: true }),
    );

    expect(job.status).toBe('incomplete');
    expect(job.summary.deleted).toEqual([]);
    expect(job.summary.skipped.map(s => s.name).sort()).toEqual(
      ORDERS_DB_ORPHANS,
    );
    for (const skipped of job.summary.skipped) {
      expect(skipped.reason).toContain(
        'no VolumeSnapshotClass is marked default for CSI driver sim.csi.k8s.io',
      );
      expect(job.reason).toContain(`${skipped.name} was not deleted`);
    }
    ORDERS_DB_ORPHANS.forEach(n =>
      expect(claimOf(sim, 'shop', n)).toBeDefined(),
    );
    expect(claimDeletes(sim)).toEqual([]);
    expect(sim.history!.snapshotEvents()).toEqual([]);
  });

  it('with required: false, deletes a claim without a class and without a snapshot, and says so', async () => {
    const sts = await start({ required: false });
    sim.store.delete(
      snapshotNames.SNAPSHOT_CLASSES,
      undefined,
      'sim-snapshots',
    );

    const job = await pruner.waitForJob(
      await pruner.prune({ ...pruneAll(sts), snapshot: true }),
    );

    expect(job.status).toBe('succeeded');
    expect(job.summary.deleted.map(d => d.name).sort()).toEqual(
      ORDERS_DB_ORPHANS,
    );
    for (const deleted of job.summary.deleted) {
      expect(deleted.snapshot).toBeUndefined();
      expect(deleted.noSnapshot).toContain(
        'it has no VolumeSnapshotClass (pvcPruner.snapshots.required is false)',
      );
    }
    expect(
      claimDeletes(sim)
        .map(d => d.request.name)
        .sort(),
    ).toEqual(ORDERS_DB_ORPHANS);
    claimDeletes(sim).forEach(d => expect(d.readySnapshots).toEqual([]));
    expect(sim.history!.snapshotEvents()).toEqual([]);
    expect(await listedSnapshots(sim)).toEqual([]);
    const events = await pruner.events(job.id);
    expect(
      events
        .filter(e => e.type === 'snapshot-skipped')
        .map(e => e.pvc)
        .sort(),
    ).toEqual(ORDERS_DB_ORPHANS);
  });

  it('waits for the snapshot controller to lift its source-protection finalizer before deleting, so the delete is neither refused nor held', async () => {
    const sts = await start();
    const held = 'data-orders-db-2';
    // Another snapshot of the claim, taken by hand, is ready only after 2 s (100 simulated
    // seconds): until then the controller keeps its finalizer on the claim, after ours is ready.
    sim.addSnapshotBehaviour({
      namespace: 'shop',
      snapshot: 'by-hand',
      readyAfterSeconds: 100,
    });
    sim.store.create(snapshotNames.SNAPSHOTS, {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: { name: 'by-hand', namespace: 'shop' },
      spec: { source: { persistentVolumeClaimName: held } },
    } as any);
    await waitFor('the hand-made snapshot to hold the claim', () =>
      claimOf(sim, 'shop', held)?.metadata.finalizers?.includes(
        SOURCE_PROTECTION,
      ),
    );

    const job = await pruner.waitForJob(
      await pruner.prune({ ...pruneAll(sts), snapshot: true }),
    );

    expect(job.status).toBe('succeeded');
    expect(job.summary.deleted.map(d => d.name).sort()).toEqual(
      ORDERS_DB_ORPHANS,
    );
    expect(job.summary.terminating).toEqual([]);
    const deletion = claimDeletes(sim).find(d => d.request.name === held)!;
    const events = sim.history!.snapshotEvents();
    const ours = events.find(
      e =>
        e.event === 'ready' && e.sourceClaim === held && e.name !== 'by-hand',
    )!;
    const byHand = events.find(
      e => e.event === 'ready' && e.name === 'by-hand',
    )!;
    expect(ours.at).toBeLessThan(byHand.at);
    // The delete arrived once the claim was released, not while ours was ready and the hold still on.
    expect(deletion.request.at).toBeGreaterThan(byHand.at);
    expect(deletion.claim!.finalizers).not.toContain(SOURCE_PROTECTION);
    expect(deletion.readySnapshots!.map(s => s.name).sort()).toEqual(
      ['by-hand', ours.name].sort(),
    );
    // One DELETE per claim, each accepted: none was refused on a changed resourceVersion.
    const claimDeleteAnswers = writesTo(sim)
      .filter(
        r => r.verb === 'delete' && r.resource === 'persistentvolumeclaims',
      )
      .map(r => r.status);
    expect(claimDeleteAnswers).toHaveLength(ORDERS_DB_ORPHANS.length);
    claimDeleteAnswers.forEach(status => expect(status).toBeLessThan(300));
  });

  it('still deletes a claim the controller keeps holding once its snapshot is ready, after the wait, and reports it terminating with that finalizer', async () => {
    const sts = await start(
      { timeoutSeconds: 1 },
      { volumeWaitTimeoutSeconds: 2 },
    );
    const held = 'data-orders-db-2';
    // A snapshot of the claim, taken by hand, that the driver fails: the controller holds the claim until it is deleted.
    sim.addSnapshotBehaviour({
      namespace: 'shop',
      snapshot: 'by-hand',
      error: 'simulated driver failure',
    });
    sim.store.create(snapshotNames.SNAPSHOTS, {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: { name: 'by-hand', namespace: 'shop' },
      spec: { source: { persistentVolumeClaimName: held } },
    } as any);
    await waitFor('the failed snapshot to hold the claim', () =>
      claimOf(sim, 'shop', held)?.metadata.finalizers?.includes(
        SOURCE_PROTECTION,
      ),
    );

    const job = await pruner.waitForJob(
      await pruner.prune({ ...pruneAll(sts), snapshot: true }),
    );

    // Our snapshot was ready, so the hold is no reason to keep the claim: it is deleted and waits on the hold.
    expect(job.status).toBe('incomplete');
    expect(job.reason).toBe(
      `Not everything was reclaimed: ${held} is still terminating, held by ${SOURCE_PROTECTION}`,
    );
    expect(job.summary.terminating).toEqual([
      expect.objectContaining({
        name: held,
        finalizers: [SOURCE_PROTECTION],
        snapshot: expect.objectContaining({ name: expect.any(String) }),
      }),
    ]);
    expect(job.summary.deleted.map(d => d.name).sort()).toEqual(
      ORDERS_DB_ORPHANS.filter(n => n !== held),
    );
    const deletion = claimDeletes(sim).find(d => d.request.name === held)!;
    expect(deletion.claim!.finalizers).toContain(SOURCE_PROTECTION);
    expect(deletion.readySnapshots!.map(s => s.name)).toEqual([
      job.summary.terminating[0].snapshot!.name,
    ]);
    // It waited (up to timeoutSeconds here) for the hold to be lifted before deleting.
    const readyAt = deletion.readySnapshots![0].readySince;
    expect(deletion.request.at - readyAt).toBeGreaterThanOrEqual(900);
    expect(
      claimOf(sim, 'shop', held)?.metadata.deletionTimestamp,
    ).toBeDefined();

    // Deleting the failed snapshot lifts the hold, and the claim goes.
    sim.store.delete(snapshotNames.SNAPSHOTS, 'shop', 'by-hand');
    await waitFor('the claim to go', () => !claimOf(sim, 'shop', held));
  });

  it('in a dry run, creates each snapshot with dryRun=All, waits for none and leaves none', async () => {
    const sts = await start();
    sim.clearRequests();

    const job = await pruner.waitForJob(
      await pruner.prune({ ...pruneAll(sts, true), snapshot: true }),
    );

    expect(job).toMatchObject({ status: 'succeeded', dryRun: true });
    for (const outcome of job.summary.deleted) {
      expect(outcome.snapshot).toEqual({
        name: `${outcome.name}-${job.id.replace(/-/g, '').slice(0, 8)}`,
        expiresAt: expect.any(String),
      });
    }
    const creates = writesTo(sim).filter(
      r => r.verb === 'create' && r.resource === 'volumesnapshots',
    );
    expect(creates).toHaveLength(ORDERS_DB_ORPHANS.length);
    for (const write of writesTo(sim))
      expect(new URLSearchParams(write.query).get('dryRun')).toBe('All');
    expect(sim.history!.snapshotEvents()).toEqual([]);
    expect(await listedSnapshots(sim)).toEqual([]);
    ORDERS_DB_ORPHANS.forEach(n =>
      expect(claimOf(sim, 'shop', n)?.metadata.finalizers).not.toContain(
        SOURCE_PROTECTION,
      ),
    );
  });
});
