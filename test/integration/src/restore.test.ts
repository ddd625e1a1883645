import { mockServices } from '@backstage/backend-test-utils';
import type { KubeSim } from 'kube-sim';
import { snapshotNames } from 'kube-sim';
import type {
  KeptSnapshot,
  RestoreResponse,
  SnapshotsResponse,
} from 'backstage-plugin-pvc-pruner-common';
import {
  ALICE,
  BOB,
  claimOf,
  component,
  ORDERS_REF,
  pruneAll,
  Pruner,
  scale,
  startPruner,
  startSim,
  statefulSetIn,
  volumeOf,
  waitFor,
  writesTo,
} from './__testUtils__/harness';

jest.setTimeout(60000);

const CLAIM = 'data-orders-db-3';
const TWIN_REF = 'component:default/orders-twin';

/** The claim POSTs that reached the simulator: a restore's create, and nothing else makes one. */
const claimCreates = (sim: KubeSim) =>
  writesTo(sim).filter(
    r => r.method === 'POST' && r.resource === 'persistentvolumeclaims',
  );

/** The snapshots GET /v1/snapshots lists for orders-db. */
async function keptOf(pruner: Pruner, user = ALICE): Promise<KeptSnapshot[]> {
  const res = await pruner.get<SnapshotsResponse>(
    `/v1/snapshots?entityRef=${encodeURIComponent(ORDERS_REF)}`,
    user,
  );
  if (res.status !== 200)
    throw new Error(`snapshots answered ${res.status}: ${res.text}`);
  const [cluster] = res.body.clusters;
  if (!cluster.ok) throw new Error(`cluster failed: ${cluster.error.message}`);
  return cluster.statefulSets
    .filter(s => s.namespace === 'shop' && s.name === 'orders-db')
    .flatMap(s => s.snapshots);
}

describe('restoring a pruned claim from its snapshot, judged from the simulator', () => {
  let sim: KubeSim;
  let pruner: Pruner;

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  /** Prunes data-orders-db-3 with a snapshot (as `prunedBy`); its uid before, and the snapshot as listed after. */
  async function pruneWithSnapshot(
    options: { features?: any[]; entities?: any[]; prunedBy?: string } = {},
  ) {
    sim = await startSim([], { recordHistory: true });
    pruner = await startPruner({
      sim,
      entities: options.entities,
      features: options.features,
      pvcPruner: { snapshots: { enabled: true } },
    });
    const sts = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');
    const request = pruneAll(sts);
    request.pvcs = request.pvcs.filter(p => p.name === CLAIM);
    const claimUid = claimOf(sim, 'shop', CLAIM)!.metadata.uid;
    const job = await pruner.waitForJob(
      await pruner.prune({ ...request, snapshot: true }, options.prunedBy),
    );
    expect(job.status).toBe('succeeded');
    expect(claimOf(sim, 'shop', CLAIM)).toBeUndefined();
    const kept = await keptOf(pruner, options.prunedBy);
    expect(kept).toHaveLength(1);
    return { claimUid, snapshot: kept[0], jobId: job.id };
  }

  const restore = (snapshot: KeptSnapshot, user = ALICE) =>
    pruner.post<RestoreResponse & { error: { message: string } }>(
      '/v1/restores',
      {
        entityRef: ORDERS_REF,
        cluster: 'demo',
        namespace: 'shop',
        statefulSet: 'orders-db',
        snapshot: { name: snapshot.name, uid: snapshot.uid },
      },
      user,
    );

  it('re-creates the claim from the snapshot; scaled up, the StatefulSet mounts it, on a volume the snapshot of the old claim provisioned', async () => {
    const { claimUid, snapshot, jobId } = await pruneWithSnapshot();
    expect(snapshot).toMatchObject({
      claimName: CLAIM,
      claimUid,
      jobId,
      readyToUse: true,
      restorable: true,
    });

    const res = await restore(snapshot);

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      claim: { name: CLAIM, namespace: 'shop' },
      snapshot: snapshot.name,
      reattachesAtReplicas: 4,
      message: 'scale orders-db to 4 replicas to bring it back',
    });
    const restored = claimOf(sim, 'shop', CLAIM)!;
    expect(restored.metadata.uid).toBe(res.body.claim.uid);
    expect(restored.spec.dataSource).toEqual({
      apiGroup: 'snapshot.storage.k8s.io',
      kind: 'VolumeSnapshot',
      name: snapshot.name,
    });
    expect(restored.metadata.annotations).toMatchObject({
      'pvc-pruner.backstage.io/restored-from': snapshot.name,
      'pvc-pruner.backstage.io/restored-by': ALICE,
    });
    // Listed again, the snapshot's claim exists: it is no longer restorable.
    expect((await keptOf(pruner))[0]).toMatchObject({
      restorable: false,
      notRestorable: expect.stringContaining(`a claim named ${CLAIM} exists`),
    });
    // (The snapshot-restored event the restore appends to the job is not asserted here: the
    // event stream ends a finished job's log at job-finished. router.test.ts reads it from the store.)

    scale(sim, 'shop', 'orders-db', 4);

    const pod = await waitFor(
      'orders-db-3 to run with the restored claim',
      () => {
        const p = sim.store.get('pods', 'shop', 'orders-db-3');
        return p?.status?.phase === 'Running' ? p : undefined;
      },
    );
    expect(
      pod.spec.volumes
        .map((v: any) => v.persistentVolumeClaim?.claimName)
        .filter(Boolean),
    ).toContain(CLAIM);
    // The very claim the restore created, not one the StatefulSet controller made afresh.
    const mounted = claimOf(sim, 'shop', CLAIM)!;
    expect(mounted.metadata.uid).toBe(res.body.claim.uid);
    expect(mounted.status.phase).toBe('Bound');
    const volume = volumeOf(sim, mounted.spec.volumeName)!;
    expect(volume.metadata.annotations).toMatchObject({
      [snapshotNames.ANN_RESTORED_FROM_SNAPSHOT]: `shop/${snapshot.name}`,
      [snapshotNames.ANN_RESTORED_FROM_SNAPSHOT_UID]: snapshot.uid,
      [snapshotNames.ANN_RESTORED_FROM_CLAIM_UID]: claimUid,
    });
  });

  it('refuses a restore over a claim of that name with 409, creating nothing', async () => {
    const { snapshot } = await pruneWithSnapshot();
    // The StatefulSet scaled back past ordinal 3 first: its controller made an empty claim of that name.
    scale(sim, 'shop', 'orders-db', 4);
    await waitFor('a fresh claim of that name', () =>
      claimOf(sim, 'shop', CLAIM),
    );
    const fresh = claimOf(sim, 'shop', CLAIM)!.metadata.uid;
    sim.clearRequests();

    const res = await restore(snapshot);

    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain(`A claim named ${CLAIM} exists`);
    expect(claimCreates(sim)).toEqual([]);
    expect(claimOf(sim, 'shop', CLAIM)!.metadata.uid).toBe(fresh);
  });

  it('refuses a user who may not prune every entity that claims the StatefulSet with 403, creating nothing', async () => {
    const permissions = mockServices.permissions.mock();
    permissions.authorize.mockImplementation(async (requests, options) => {
      const user = (options.credentials.principal as { userEntityRef?: string })
        .userEntityRef;
      return requests.map(r => {
        const ref = 'resourceRef' in r ? r.resourceRef : undefined;
        const denied =
          user === ALICE &&
          r.permission.name === 'pvc-pruner.prune' &&
          ref === TWIN_REF;
        return { result: denied ? 'DENY' : 'ALLOW' };
      }) as any;
    });
    const { snapshot } = await pruneWithSnapshot({
      // orders-twin claims orders-db too (the same kubernetes-id).
      entities: [component('orders'), component('orders-twin', 'orders')],
      features: [permissions.factory],
      prunedBy: BOB,
    });
    sim.clearRequests();

    const res = await restore(snapshot, ALICE);

    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain(TWIN_REF);
    expect(claimCreates(sim)).toEqual([]);
    expect(claimOf(sim, 'shop', CLAIM)).toBeUndefined();
    // Bob may prune both: the same restore is his to make.
    expect((await restore(snapshot, BOB)).status).toBe(201);
  });

  it('lists a kept snapshot until it is deleted in the cluster, read live each time', async () => {
    const { snapshot } = await pruneWithSnapshot();

    sim.store.delete(snapshotNames.SNAPSHOTS, 'shop', snapshot.name);
    await waitFor(
      'the snapshot to be gone',
      () => !sim.store.get(snapshotNames.SNAPSHOTS, 'shop', snapshot.name),
    );

    expect(await keptOf(pruner)).toEqual([]);
    const res = await restore(snapshot);
    expect(res.status).toBe(404);
    expect(claimCreates(sim)).toEqual([]);
  });
});
