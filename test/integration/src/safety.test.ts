import type { KubeSim } from 'kube-sim';
import { describeKept } from 'backstage-plugin-pvc-pruner-common';
import {
  ALICE,
  BOB,
  claimOf,
  component,
  pruneAll,
  Pruner,
  readSse,
  scale,
  startPruner,
  startSim,
  statefulSetIn,
  statefulSetObjects,
  waitFor,
  writesTo,
} from './__testUtils__/harness';

jest.setTimeout(30000);

/** Pod lists the simulator has answered so far. */
/** The reads of a claim's last check before its delete: the pod list and the StatefulSet, sent together. */
const lastCheckReads = (sim: KubeSim) =>
  sim
    .requests()
    .filter(
      r =>
        (r.verb === 'list' && r.resource === 'pods') ||
        (r.verb === 'get' && r.resource === 'statefulsets'),
    ).length;

describe('a prune stays safe while the cluster changes', () => {
  let sim: KubeSim;
  let pruner: Pruner;

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  it('aborts when the StatefulSet is scaled mid-job, and leaves the claims it had not reached', async () => {
    sim = await startSim();
    // The claim deleted as the StatefulSet scales up stays Terminating (the new pod uses it): follow it only briefly.
    pruner = await startPruner({
      sim,
      pvcPruner: { volumeWaitTimeoutSeconds: 1 },
    });
    const sts = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');
    // Deletions are slow, so the job is still on its first claim when the StatefulSet is scaled.
    sim.addFault({
      verb: 'delete',
      resource: 'persistentvolumeclaims',
      latencyMs: 1000,
    });
    const id = await pruner.prune(pruneAll(sts));

    // When the first claim (lowest ordinal first: data-orders-db-2) is being deleted, scale 2 -> 3:
    // it is announced before its last check, so wait for that check's two reads to be answered.
    let scaled: Promise<unknown> | undefined;
    await readSse(`${pruner.baseUrl}/v1/prune-jobs/${id}/events`, {
      onFrame: frame => {
        if (
          frame.data.type === 'pvc-deleting' &&
          frame.data.pvc === 'data-orders-db-2'
        ) {
          const readsBefore = lastCheckReads(sim);
          scaled ??= waitFor(
            'the last check of data-orders-db-2',
            () => lastCheckReads(sim) >= readsBefore + 2,
            5000,
            2,
          ).then(() => scale(sim, 'shop', 'orders-db', 3));
        }
      },
    });
    await scaled;
    const job = await pruner.waitForJob(id);

    expect(job.status).toBe('aborted');
    expect(job.reason).toMatch(
      /StatefulSet shop\/orders-db changed from ordinals 0–1 to ordinals 0–2 during the job/,
    );
    // Only the claim in flight was deleted; the rest were not attempted and still exist.
    const attempted = writesTo(sim).filter(
      r => r.method === 'DELETE' && r.resource === 'persistentvolumeclaims',
    );
    // The claim in flight is deleted when the scale lands after its last
    // check, or kept when that check (it reads the StatefulSet live) saw it
    // already; nothing after it is attempted either way.
    const deleted = attempted.map(r => r.path.split('/').pop());
    expect([[], ['data-orders-db-2']]).toContainEqual(deleted);
    const notAttempted = [
      'wal-orders-db-2',
      'data-orders-db-3',
      'wal-orders-db-3',
      'data-orders-db-4',
    ];
    const kept = deleted.length ? [] : ['data-orders-db-2'];
    expect(job.summary.skipped.map(s => s.name).sort()).toEqual(
      [...kept, ...notAttempted].sort(),
    );
    job.summary.skipped
      .filter(s => notAttempted.includes(s.name))
      .forEach(s =>
        expect(s.reason).toMatch(
          /^not attempted: the job stopped because StatefulSet shop\/orders-db changed/,
        ),
      );
    job.summary.skipped
      .filter(s => kept.includes(s.name))
      .forEach(s =>
        expect(s.reason).toMatch(
          /^(it is no longer an orphan: |not attempted: the job stopped because StatefulSet shop\/orders-db changed)/,
        ),
      );
    const uids = new Map(sts.orphans.map(o => [o.name, o.uid]));
    [...kept, ...notAttempted].forEach(name =>
      expect(claimOf(sim, 'shop', name)?.metadata.uid).toBe(uids.get(name)),
    );
    const finished = (await pruner.events(id)).pop()!;
    expect(finished).toMatchObject({ type: 'job-finished', status: 'aborted' });
  });

  it('keeps the claim of a pod that is still terminating, in the scan and in a prune', async () => {
    // ledger-db runs 3 replicas whose pods take an hour (simulated: 72 s) to stop.
    sim = await startSim(
      statefulSetObjects({
        name: 'ledger-db',
        namespace: 'shop',
        kubernetesId: 'ledger',
        replicas: 3,
        gracePeriodSeconds: 3600,
        orphanOrdinals: [5],
      }),
    );
    pruner = await startPruner({ sim, entities: [component('ledger')] });
    scale(sim, 'shop', 'ledger-db', 2);
    await waitFor(
      'pod ledger-db-2 to be terminating',
      () =>
        sim.store.get('pods', 'shop', 'ledger-db-2')?.metadata
          .deletionTimestamp,
    );

    const sts = statefulSetIn(
      await pruner.scan('component:default/ledger'),
      'shop',
      'ledger-db',
    );
    expect(sts.orphans.map(o => o.name)).toEqual(['data-ledger-db-5']);
    const kept = sts.kept.find(k => k.name === 'data-ledger-db-2');
    expect(kept).toMatchObject({ ordinal: 2, reason: 'mounted-by-pod' });
    expect(describeKept(kept!, sts)).toBe(
      'mounted by pod ledger-db-2 (terminating)',
    );

    // A request that names it anyway (e.g. from a stale page) skips it after the re-check.
    const claim = claimOf(sim, 'shop', 'data-ledger-db-2')!;
    const id = await pruner.prune({
      entityRef: 'component:default/ledger',
      cluster: 'demo',
      namespace: 'shop',
      statefulSet: 'ledger-db',
      pvcs: [
        { name: 'data-ledger-db-2', uid: claim.metadata.uid },
        { name: 'data-ledger-db-5', uid: sts.orphans[0].uid },
      ],
    });
    const job = await pruner.waitForJob(id);

    expect(job.status).toBe('succeeded');
    expect(job.summary.deleted.map(d => d.name)).toEqual(['data-ledger-db-5']);
    expect(job.summary.skipped).toEqual([
      expect.objectContaining({
        name: 'data-ledger-db-2',
        reason:
          'it is no longer an orphan: mounted by pod ledger-db-2 (terminating)',
      }),
    ]);
    expect(claimOf(sim, 'shop', 'data-ledger-db-2')?.metadata.uid).toBe(
      claim.metadata.uid,
    );
    expect(
      sim.store.get('pods', 'shop', 'ledger-db-2')?.metadata.deletionTimestamp,
    ).toBeDefined();
    const deletes = writesTo(sim).filter(
      r => r.method === 'DELETE' && r.resource === 'persistentvolumeclaims',
    );
    expect(deletes.map(r => r.path.split('/').pop())).toEqual([
      'data-ledger-db-5',
    ]);
  });

  it('re-checks every named claim: in-use, foreign and recreated claims are skipped, with the reason', async () => {
    sim = await startSim();
    pruner = await startPruner({ sim });
    const uid = (name: string) => claimOf(sim, 'shop', name)!.metadata.uid;

    const id = await pruner.prune({
      entityRef: 'component:default/orders',
      cluster: 'demo',
      namespace: 'shop',
      statefulSet: 'orders-db',
      pvcs: [
        { name: 'data-orders-db-0', uid: uid('data-orders-db-0') },
        { name: 'data-cart-cache-0', uid: uid('data-cart-cache-0') },
        { name: 'data-orders-db-backup', uid: uid('data-orders-db-backup') },
        { name: 'data-orders-db-2', uid: 'the-uid-of-an-older-claim' },
        { name: 'data-orders-db-3', uid: uid('data-orders-db-3') },
      ],
    });
    const job = await pruner.waitForJob(id);

    expect(job.status).toBe('succeeded');
    expect(job.summary.deleted.map(d => d.name)).toEqual(['data-orders-db-3']);
    const skipped = Object.fromEntries(
      job.summary.skipped.map(s => [s.name, s.reason]),
    );
    expect(skipped).toEqual({
      'data-orders-db-0':
        'it is no longer an orphan: ordinal 0 is one the StatefulSet runs (0–1)',
      'data-cart-cache-0': 'not a claim of StatefulSet shop/orders-db',
      'data-orders-db-backup': 'not a claim of StatefulSet shop/orders-db',
      'data-orders-db-2':
        'it was deleted and recreated since you confirmed it (uid changed)',
    });
    const deletes = writesTo(sim).filter(
      r => r.method === 'DELETE' && r.resource === 'persistentvolumeclaims',
    );
    expect(deletes.map(r => r.path.split('/').pop())).toEqual([
      'data-orders-db-3',
    ]);
    [
      'data-orders-db-0',
      'data-cart-cache-0',
      'data-orders-db-backup',
      'data-orders-db-2',
    ].forEach(name => expect(claimOf(sim, 'shop', name)).toBeDefined());
  });

  it('lets only one of two concurrent prunes of a StatefulSet run: the other gets 409 naming who holds it', async () => {
    sim = await startSim();
    pruner = await startPruner({ sim });
    const sts = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');
    sim.addFault({
      verb: 'delete',
      resource: 'persistentvolumeclaims',
      latencyMs: 300,
    });

    // Both at once: both see no lease, both try to create it, Kubernetes lets one win.
    const [a, b] = await Promise.all([
      pruner.post('/v1/prune-jobs', pruneAll(sts), ALICE),
      pruner.post('/v1/prune-jobs', pruneAll(sts), BOB),
    ]);
    expect([a.status, b.status].sort()).toEqual([202, 409]);
    const [winner, winnerUser, loser] =
      a.status === 202 ? [a, ALICE, b] : [b, BOB, a];
    expect(loser.body.error.name).toBe('ConflictError');
    expect(loser.body.error.message).toMatch(
      new RegExp(
        `^StatefulSet shop/orders-db is being pruned by ${winnerUser} \\(job ${winner.body.id}\\) since \\d{4}-`,
      ),
    );

    // While it runs, later prunes and dry runs are refused the same way.
    const later = await pruner.post(
      '/v1/prune-jobs',
      pruneAll(sts, true),
      winnerUser === ALICE ? BOB : ALICE,
    );
    expect(later.status).toBe(409);
    expect(later.body.error.message).toContain(
      `is being pruned by ${winnerUser} (job ${winner.body.id})`,
    );
    // The refused requests made no job, and the winner finishes normally.
    const history = await pruner.get(
      '/v1/prune-jobs?entityRef=component:default/orders',
    );
    expect(history.body.items.map((j: any) => j.id)).toEqual([winner.body.id]);
    expect((await pruner.waitForJob(winner.body.id)).status).toBe('succeeded');
    // Once it is done, the StatefulSet can be pruned again.
    const again = await pruner.post(
      '/v1/prune-jobs',
      {
        ...pruneAll(sts, true),
        pvcs: [{ name: 'data-orders-db-2', uid: sts.orphans[0].uid }],
      },
      BOB,
    );
    expect(again.status).toBe(202);
  });
});
