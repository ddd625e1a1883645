import type { KubeObject, KubeSim } from 'kube-sim';
import { snapshotNames } from 'kube-sim';
import type {
  LeftBehindGroup,
  LeftBehindResponse,
  PruneRequest,
} from 'backstage-plugin-pvc-pruner-common';
import {
  ALICE,
  aliceDenied,
  BOB,
  claimOf,
  component,
  heldTasks,
  Pruner,
  readSse,
  startPruner,
  startSim,
  statefulSetObjects,
  waitFor,
  withClockAhead,
  writesTo,
} from './__testUtils__/harness';
// The demo's own code path, run against the real plugin.
// eslint-disable-next-line @backstage/no-relative-monorepo-imports
import {
  DELETED_STATEFULSET,
  leaveDeletedStatefulSet,
} from '../../demo/deletedStatefulSet';

jest.setTimeout(40000);

const INVOICES_REF = 'component:default/invoices';
const INVOICES_CLAIMS = [
  'data-invoices-db-0',
  'data-invoices-db-1',
  'data-invoices-db-2',
];

/** StatefulSet shop/invoices-db of the invoices entity, running 3 replicas. */
const invoicesDb = (replicas = 3) =>
  statefulSetObjects({
    name: 'invoices-db',
    namespace: 'shop',
    kubernetesId: 'invoices',
    replicas,
  });

/** Deletes the StatefulSet as `kubectl delete sts` does (its pods go, its claims stay: whenDeleted Retain). */
async function deleteStatefulSet(sim: KubeSim, name: string) {
  sim.store.delete('apps/statefulsets', 'shop', name);
  await waitFor(`the pods of ${name} to be gone`, () =>
    sim.store
      .list('pods', { namespace: 'shop' })
      .items.every(p => !p.metadata.name.startsWith(`${name}-`)),
  );
}

function createStatefulSet(sim: KubeSim, replicas: number) {
  const [sts] = invoicesDb(replicas);
  sim.store.create('apps/statefulsets', structuredClone(sts) as KubeObject);
}

async function leftBehind(pruner: Pruner, entityRef = INVOICES_REF) {
  const { status, body } = await pruner.get<LeftBehindResponse>(
    `/v1/left-behind?entityRef=${encodeURIComponent(entityRef)}`,
  );
  expect(status).toBe(200);
  const [cluster] = body.clusters;
  if (!cluster.ok) throw new Error(cluster.error.message);
  return cluster;
}

function pruneGroup(
  group: LeftBehindGroup,
  extra: Partial<PruneRequest> = {},
): PruneRequest {
  return {
    entityRef: INVOICES_REF,
    cluster: 'demo',
    namespace: group.namespace,
    statefulSet: group.statefulSet.name,
    pvcs: group.report.orphans.map(o => ({ name: o.name, uid: o.uid })),
    leftBy: {
      evidence: group.evidence,
      ...(group.statefulSet.uid
        ? { statefulSetUid: group.statefulSet.uid }
        : {}),
    },
    ...extra,
  };
}

const claimDeletes = (sim: KubeSim) =>
  writesTo(sim)
    .filter(
      r => r.method === 'DELETE' && r.resource === 'persistentvolumeclaims',
    )
    .map(r => r.path.split('/').pop());

describe('claims of deleted StatefulSets over HTTP', () => {
  let sim: KubeSim;
  let pruner: Pruner;

  beforeEach(async () => {
    sim = await startSim(invoicesDb());
    pruner = await startPruner({
      sim,
      entities: [component('orders'), component('invoices')],
      pvcPruner: { volumeWaitTimeoutSeconds: 2 },
    });
    // A scan sees invoices-db and records its claims' lineage.
    await pruner.scan(INVOICES_REF);
  });

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  it('shows the claims under the entity once the StatefulSet is deleted, prunes them, and they are gone', async () => {
    expect((await leftBehind(pruner)).groups).toEqual([]);
    const uid = sim.store.get('apps/statefulsets', 'shop', 'invoices-db')!
      .metadata.uid;
    await deleteStatefulSet(sim, 'invoices-db');

    const { groups } = await leftBehind(pruner);
    expect(groups).toHaveLength(1);
    const [group] = groups;
    expect(group).toMatchObject({
      namespace: 'shop',
      statefulSet: { name: 'invoices-db', uid },
      evidence: 'lineage',
      claimants: [INVOICES_REF],
    });
    expect(group.lastSeenAt).toEqual(expect.any(String));
    expect(group.report.orphans.map(o => o.name)).toEqual(INVOICES_CLAIMS);
    // Another entity does not see them.
    expect(
      (await leftBehind(pruner, 'component:default/orders')).groups,
    ).toEqual([]);

    const id = await pruner.prune(pruneGroup(group));
    const job = await pruner.waitForJob(id);
    expect(job.status).toBe('succeeded');
    expect(job.claimants).toEqual([INVOICES_REF]);
    expect(job.summary.deleted.map(d => d.name).sort()).toEqual(
      INVOICES_CLAIMS,
    );
    INVOICES_CLAIMS.forEach(name =>
      expect(claimOf(sim, 'shop', name)).toBeUndefined(),
    );
    expect(claimDeletes(sim).sort()).toEqual(INVOICES_CLAIMS);
    // The Lease was the deleted StatefulSet's name's.
    const leases = writesTo(sim).filter(r => r.resource === 'leases');
    expect(
      leases.some(r => r.path.endsWith('/leases/pvc-pruner-invoices-db')),
    ).toBe(true);
    expect((await leftBehind(pruner)).groups).toEqual([]);
  });

  it('offers nothing once the StatefulSet is created again under its name, and refuses a prune naming the old one', async () => {
    await deleteStatefulSet(sim, 'invoices-db');
    const [group] = (await leftBehind(pruner)).groups;
    expect(group.report.orphans).toHaveLength(3);

    createStatefulSet(sim, 4);
    await waitFor('the new invoices-db to use its claims', () =>
      INVOICES_CLAIMS.every(
        (_, i) =>
          sim.store.get('pods', 'shop', `invoices-db-${i}`)?.status?.phase ===
          'Running',
      ),
    );
    expect((await leftBehind(pruner)).groups).toEqual([]);

    const { status, body } = await pruner.post(
      '/v1/prune-jobs',
      pruneGroup(group),
    );
    expect(status).toBe(400);
    expect(body.error.message).toMatch(/left no claims that can be pruned/);
    expect(claimDeletes(sim)).toEqual([]);
    INVOICES_CLAIMS.forEach(name =>
      expect(claimOf(sim, 'shop', name)).toBeDefined(),
    );
  });

  it('stops before its next delete when the StatefulSet is created again mid-prune', async () => {
    await deleteStatefulSet(sim, 'invoices-db');
    const [group] = (await leftBehind(pruner)).groups;
    // Deletions are slow, so the job is on its first claim when the StatefulSet comes back.
    sim.addFault({
      verb: 'delete',
      resource: 'persistentvolumeclaims',
      latencyMs: 1000,
    });
    const id = await pruner.prune(pruneGroup(group));
    let created = false;
    await readSse(`${pruner.baseUrl}/v1/prune-jobs/${id}/events`, {
      onFrame: frame => {
        if (
          !created &&
          frame.data.type === 'pvc-deleting' &&
          frame.data.pvc === INVOICES_CLAIMS[0]
        ) {
          created = true;
          createStatefulSet(sim, 3);
        }
      },
    });
    const job = await pruner.waitForJob(id);
    expect(job.status).toBe('aborted');
    expect(job.reason).toMatch(/StatefulSet shop\/invoices-db exists again/);
    // At most the claim in flight was deleted; the others were not attempted.
    const deleted = claimDeletes(sim);
    expect([[], [INVOICES_CLAIMS[0]]]).toContainEqual(deleted);
    INVOICES_CLAIMS.slice(1).forEach(name =>
      expect(claimOf(sim, 'shop', name)).toBeDefined(),
    );
  });

  it('counts them on the fleet page under their entity and owner, as their own kind, and unclaimed ones as unowned', async () => {
    // The fleet's scan sees a StatefulSet no entity claims, and records its claims' lineage too.
    sim.store.create(
      'apps/statefulsets',
      structuredClone(
        statefulSetObjects({
          name: 'stray-db',
          namespace: 'shop',
          kubernetesId: 'nobody',
          replicas: 1,
        })[0],
      ) as KubeObject,
    );
    await waitFor('stray-db to run', () =>
      Boolean(
        sim.store.get('persistentvolumeclaims', 'shop', 'data-stray-db-0'),
      ),
    );
    await pruner.get('/v1/fleet');
    await deleteStatefulSet(sim, 'invoices-db');
    await deleteStatefulSet(sim, 'stray-db');

    const { status, body } = await pruner.get('/v1/fleet');
    expect(status).toBe(200);
    const invoices = body.items.find((e: any) => e.entityRef === INVOICES_REF);
    expect(invoices.leftBehind.statefulSets).toEqual([
      expect.objectContaining({
        name: 'invoices-db',
        evidence: 'lineage',
        orphans: 3,
      }),
    ]);
    expect(invoices.leftBehind.totals.orphans).toBe(3);
    // Not mixed into the orphans of live StatefulSets.
    expect(invoices.totals.orphans).toBe(0);
    expect(body.totals.leftBehind.orphans).toBe(3);
    const owner = body.owners.find(
      (o: any) => o.owner === 'group:default/team-a',
    );
    expect(owner.leftBehind.orphans).toBe(3);
    expect(body.unowned.leftBehind.statefulSets).toEqual([
      expect.objectContaining({ name: 'stray-db', orphans: 1 }),
    ]);
  });

  it('refuses claims that are not the group’s, and a StatefulSet that exists', async () => {
    await deleteStatefulSet(sim, 'invoices-db');
    const [group] = (await leftBehind(pruner)).groups;
    const foreign = claimOf(sim, 'shop', 'data-orders-db-2')!;
    const crafted = pruneGroup(group, {
      pvcs: [{ name: 'data-orders-db-2', uid: foreign.metadata.uid! }],
    });
    const refused = await pruner.post('/v1/prune-jobs', crafted);
    expect(refused.status).toBe(400);
    // A live StatefulSet's claims never go through this path.
    const live = sim.store.get('apps/statefulsets', 'shop', 'orders-db')!;
    const asLive = await pruner.post('/v1/prune-jobs', {
      entityRef: 'component:default/orders',
      cluster: 'demo',
      namespace: 'shop',
      statefulSet: 'orders-db',
      pvcs: [{ name: 'data-orders-db-2', uid: foreign.metadata.uid }],
      leftBy: { evidence: 'lineage', statefulSetUid: live.metadata.uid },
    });
    expect(asLive.status).toBe(400);
    expect(claimDeletes(sim)).toEqual([]);
  });
});

describe('a prune of claims of a deleted StatefulSet that keeps a snapshot of each', () => {
  let sim: KubeSim;
  let pruner: Pruner;

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  it('deletes each claim only after a ready, sealed snapshot of it exists; restores none (no StatefulSet to mount it), and lets it expire as any other', async () => {
    sim = await startSim(invoicesDb(), { recordHistory: true });
    const tasks = heldTasks();
    pruner = await startPruner({
      sim,
      entities: [component('orders'), component('invoices')],
      pvcPruner: {
        volumeWaitTimeoutSeconds: 2,
        snapshots: { enabled: true, retentionDays: 7 },
      },
      features: [tasks.factory],
    });
    await pruner.scan(INVOICES_REF);
    await deleteStatefulSet(sim, 'invoices-db');
    const [group] = (await leftBehind(pruner)).groups;
    const uids = new Map(
      INVOICES_CLAIMS.map(n => [n, claimOf(sim, 'shop', n)!.metadata.uid]),
    );

    const id = await pruner.prune(pruneGroup(group, { snapshot: true }));
    const job = await pruner.waitForJob(id);

    expect(job.status).toBe('succeeded');
    // The simulator's word: each claim's DELETE met a ready snapshot of that claim.
    const deletes = sim
      .history!.claimDeletions()
      .filter(d => d.request.namespace === 'shop');
    expect(deletes.map(d => d.request.name).sort()).toEqual(INVOICES_CLAIMS);
    const snapshots = sim.store.list(snapshotNames.SNAPSHOTS, {
      namespace: 'shop',
    }).items;
    for (const deletion of deletes) {
      const name = deletion.request.name!;
      expect(deletion.claim?.uid).toBe(uids.get(name));
      expect(deletion.readySnapshots).toHaveLength(1);
      const [ready] = deletion.readySnapshots!;
      expect(ready.readySince).toBeLessThan(deletion.request.at);
      const snapshot = snapshots.find(s => s.metadata.name === ready.name)!;
      // Sealed, as the snapshots of a live StatefulSet's claims are, and named in the job's outcome.
      expect(snapshot.metadata.labels).toMatchObject({
        'pvc-pruner.backstage.io/job': id,
        'pvc-pruner.backstage.io/statefulset': 'invoices-db',
        'pvc-pruner.backstage.io/claim-uid': uids.get(name),
      });
      expect(
        snapshot.metadata.annotations?.['pvc-pruner.backstage.io/seal'],
      ).toEqual(expect.any(String));
      expect(
        job.summary.deleted.find(d => d.name === name)?.snapshot?.name,
      ).toBe(ready.name);
    }

    // No StatefulSet of that name exists to mount a restored claim: the snapshot is not offered for a
    // restore (the job's outcome lists it)...
    const kept = await pruner.get(
      `/v1/snapshots?entityRef=${encodeURIComponent(INVOICES_REF)}`,
    );
    expect(kept.status).toBe(200);
    expect(
      kept.body.clusters.flatMap((c: any) => c.statefulSets ?? []),
    ).toEqual([]);
    // ...and a restore asked for all the same creates nothing.
    const [first] = snapshots;
    const restore = await pruner.post('/v1/restores', {
      entityRef: INVOICES_REF,
      cluster: 'demo',
      namespace: 'shop',
      statefulSet: 'invoices-db',
      snapshot: { name: first.metadata.name, uid: first.metadata.uid },
    });
    expect(restore.status).toBe(403);
    expect(restore.text).toContain('is not one of component:default/invoices');
    expect(
      writesTo(sim).filter(
        r => r.method === 'POST' && r.resource === 'persistentvolumeclaims',
      ),
    ).toEqual([]);

    // Past the retention, the expiry task deletes them as any other.
    await withClockAhead(8 * 86_400_000, () =>
      tasks.run('pvc-pruner-snapshot-expiry'),
    );
    await waitFor(
      'the expired snapshots to go',
      () =>
        sim.store.list(snapshotNames.SNAPSHOTS, { namespace: 'shop' }).items
          .length === 0,
    );
  });
});

describe('claims of a deleted StatefulSet that no entity claims, over HTTP', () => {
  let sim: KubeSim;
  let pruner: Pruner;

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  it('are pruned without an entity (leftBy) by a holder of pvc-pruner.unowned.prune, and refused to whoever lacks it', async () => {
    sim = await startSim(
      statefulSetObjects({
        name: 'stray-db',
        namespace: 'shop',
        kubernetesId: 'nobody',
        replicas: 2,
      }),
    );
    pruner = await startPruner({
      sim,
      entities: [component('orders')],
      features: [aliceDenied('pvc-pruner.unowned.prune').factory],
      pvcPruner: { volumeWaitTimeoutSeconds: 2 },
    });
    await waitFor('stray-db to run', () =>
      Boolean(
        sim.store.get('persistentvolumeclaims', 'shop', 'data-stray-db-1'),
      ),
    );
    // The fleet's scan sees stray-db, which no entity claims, and records its claims' lineage.
    await pruner.get('/v1/fleet');
    await deleteStatefulSet(sim, 'stray-db');

    const read = await pruner.get(
      '/v1/unowned/orphans?cluster=demo&namespace=shop&statefulSet=stray-db&leftBy=lineage',
      BOB,
    );
    expect(read.status).toBe(200);
    const group: LeftBehindGroup = read.body.leftBehind;
    expect(group).toMatchObject({
      statefulSet: { name: 'stray-db' },
      evidence: 'lineage',
      claimants: [],
    });
    expect(group.report.orphans.map(o => o.name).sort()).toEqual([
      'data-stray-db-0',
      'data-stray-db-1',
    ]);
    const { entityRef: _none, ...request } = pruneGroup(group);

    const refused = await pruner.post('/v1/prune-jobs', request, ALICE);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('pvc-pruner.unowned.prune');
    expect(claimDeletes(sim)).toEqual([]);

    const job = await pruner.waitForJob(await pruner.prune(request, BOB));
    expect(job.status).toBe('succeeded');
    expect(job.entityRef).toBeUndefined();
    expect(claimOf(sim, 'shop', 'data-stray-db-0')).toBeUndefined();
    expect(claimOf(sim, 'shop', 'data-stray-db-1')).toBeUndefined();
  });
});

describe('claims with no lineage over HTTP', () => {
  let sim: KubeSim;
  let pruner: Pruner;

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  it('offers them by name and labels, prunable only with each name typed', async () => {
    // Claims of a StatefulSet deleted before pvc-pruner ever saw it.
    const [, ...claims] = statefulSetObjects({
      name: 'old-ledger',
      namespace: 'shop',
      kubernetesId: 'invoices',
      replicas: 0,
      orphanOrdinals: [0, 1],
    });
    sim = await startSim(claims);
    pruner = await startPruner({
      sim,
      entities: [component('orders'), component('invoices')],
    });
    const { groups } = await leftBehind(pruner);
    expect(groups).toHaveLength(1);
    const [group] = groups;
    expect(group).toMatchObject({
      statefulSet: { name: 'old-ledger' },
      evidence: 'name-and-labels',
      nameEvidence: {
        template: 'data',
        labels: {
          'app.kubernetes.io/name': 'old-ledger',
          'backstage.io/kubernetes-id': 'invoices',
        },
        otherParses: [{ template: 'data-old', statefulSet: 'ledger' }],
      },
    });
    const names = ['data-old-ledger-0', 'data-old-ledger-1'];
    expect(group.report.orphans.map(o => o.name)).toEqual(names);

    const untyped = await pruner.post('/v1/prune-jobs', pruneGroup(group));
    expect(untyped.status).toBe(400);
    expect(untyped.body.error.message).toMatch(/typing its name/);
    const oneTyped = await pruner.post(
      '/v1/prune-jobs',
      pruneGroup(group, {
        leftBy: { evidence: 'name-and-labels', typedNames: [names[0]] },
      }),
    );
    expect(oneTyped.status).toBe(400);
    expect(claimDeletes(sim)).toEqual([]);

    const id = await pruner.prune(
      pruneGroup(group, {
        leftBy: { evidence: 'name-and-labels', typedNames: names },
      }),
    );
    const job = await pruner.waitForJob(id);
    expect(job.status).toBe('succeeded');
    names.forEach(n => expect(claimOf(sim, 'shop', n)).toBeUndefined());
  });
});

describe('the demo’s deleted StatefulSet, against the real plugin', () => {
  let sim: KubeSim;
  let pruner: Pruner;

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  it('leaves claims with lineage that the entity’s card lists, recorded by a scan and nothing else', async () => {
    sim = await startSim();
    pruner = await startPruner({ sim, entities: [component('cart')] });
    const { name, entityRef } = DELETED_STATEFULSET;
    await leaveDeletedStatefulSet(sim, {
      scan: async ref => {
        await pruner.scan(ref);
      },
      leftBehind: async ref =>
        (await leftBehind(pruner, ref)).groups.map(g => g.statefulSet.name),
    });
    const [group] = (await leftBehind(pruner, entityRef)).groups;
    expect(group).toMatchObject({
      statefulSet: { name },
      evidence: 'lineage',
      claimants: [entityRef],
    });
    expect(group.report.orphans.map(o => o.name)).toEqual([
      `data-${name}-0`,
      `data-${name}-1`,
    ]);
  });
});
