import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject, KubeSim, PolicyRule } from 'kube-sim';
import type {
  KeptSnapshot,
  SnapshotsResponse,
} from 'backstage-plugin-pvc-pruner-common';
import {
  claimOf,
  component,
  grantsOf,
  heldTasks,
  ORDERS_DB_ORPHANS,
  ORDERS_REF,
  permissionOf,
  pruneAll,
  Pruner,
  rbacRules,
  startPruner,
  startSim,
  statefulSetIn,
  statefulSetObjects,
  withClockAhead,
} from './__testUtils__/harness';

jest.setTimeout(60000);

const SNAPSHOT_RULES = 'pvc-pruner-snapshots-rbac.yaml';
const SERVICE_ACCOUNT = 'system:serviceaccount:backstage:pvc-pruner';
const LOGS_REF = 'component:default/logs';
const LOGS_ORPHAN = 'data-logs-db-1';

/**
 * A StatefulSet whose claims are on hostPath volumes (a local-path
 * provisioner, not CSI): the plugin finds their driver from the
 * StorageClass, the one read that needs `get storageclasses`.
 */
const LOCAL_PATH: KubeObject[] = [
  {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'local-path' },
    provisioner: 'rancher.io/local-path',
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
  } as unknown as KubeObject,
  ...statefulSetObjects({
    name: 'logs-db',
    namespace: 'shop',
    kubernetesId: 'logs',
    replicas: 1,
    orphanOrdinals: [1],
    storageClassName: 'local-path',
  }),
];

/** `rules` less one verb on one resource. */
function without(
  rules: PolicyRule[],
  resource: string,
  verb: string,
): PolicyRule[] {
  return rules.map(r =>
    r.resources?.includes(resource)
      ? { ...r, verbs: r.verbs.filter(v => v !== verb) }
      : r,
  );
}

/** Names of the claims whose DELETE reached the simulator. */
const deletedClaims = (sim: KubeSim) =>
  sim
    .history!.claimDeletions()
    .map(d => d.request.name!)
    .sort();

describe('the service account of rbac/pvc-pruner-rbac.yaml plus rbac/pvc-pruner-snapshots-rbac.yaml', () => {
  let sim: KubeSim;
  let pruner: Pruner | undefined;
  let tasks: ReturnType<typeof heldTasks>;

  // One database for the backends a test restarts with other rules, as one
  // Backstage's restarts share theirs (its snapshots' seal key among them).
  let databaseDir: string;

  beforeEach(async () => {
    sim = await startSim(LOCAL_PATH, { recordHistory: true });
    databaseDir = mkdtempSync(join(tmpdir(), 'pvc-pruner-rbac-'));
  });

  afterEach(async () => {
    await pruner?.stop();
    pruner = undefined;
    await sim?.close();
    rmSync(databaseDir, { recursive: true, force: true });
  });

  async function startWith(rules: PolicyRule[]) {
    const token = sim.addToken({ user: SERVICE_ACCOUNT, rules });
    tasks = heldTasks();
    pruner = await startPruner({
      sim,
      token,
      features: [tasks.factory],
      entities: [component('orders'), component('logs')],
      database: {
        client: 'better-sqlite3',
        connection: { directory: databaseDir },
      },
      pvcPruner: {
        snapshots: { enabled: true, required: false, timeoutSeconds: 1 },
      },
    });
    return pruner;
  }

  /** The snapshots GET /v1/snapshots lists for orders-db. */
  async function keptSnapshots(p: Pruner): Promise<KeptSnapshot[]> {
    const res = await p.get<SnapshotsResponse>(
      `/v1/snapshots?entityRef=${encodeURIComponent(ORDERS_REF)}`,
    );
    const [cluster] = res.body.clusters;
    if (!cluster?.ok) throw new Error(`snapshots answered ${res.text}`);
    return cluster.statefulSets
      .filter(s => s.name === 'orders-db')
      .flatMap(s => s.snapshots);
  }

  const restoreFrom = (p: Pruner, snapshot: KeptSnapshot) =>
    p.post('/v1/restores', {
      entityRef: ORDERS_REF,
      cluster: 'demo',
      namespace: 'shop',
      statefulSet: 'orders-db',
      snapshot: { name: snapshot.name, uid: snapshot.uid },
    });

  /** Prunes, with snapshots, the orphans of orders-db and of logs-db (or the ones named). */
  async function pruneBoth(p: Pruner, only?: string[]) {
    const jobs = [];
    for (const [name, ref] of [
      ['orders-db', 'component:default/orders'],
      ['logs-db', LOGS_REF],
    ]) {
      const sts = statefulSetIn(await p.scan(ref), 'shop', name);
      const request = pruneAll(sts, false, ref);
      request.pvcs = request.pvcs.filter(c => !only || only.includes(c.name));
      jobs.push(
        await p.waitForJob(await p.prune({ ...request, snapshot: true })),
      );
    }
    return jobs;
  }

  it('is enough for a prune with snapshots, and every verb the snapshot manifest grants is used', async () => {
    const snapshotRules = rbacRules(SNAPSHOT_RULES);
    const p = await startWith([...rbacRules(), ...snapshotRules]);

    const [orders, logs] = await pruneBoth(p);

    expect(orders.status).toBe('succeeded');
    expect(orders.summary.deleted.map(d => d.name).sort()).toEqual(
      ORDERS_DB_ORPHANS,
    );
    orders.summary.deleted.forEach(d => expect(d.snapshot?.name).toBeTruthy());
    // The volume is not CSI: its StorageClass names the driver, which has no class; required is false.
    expect(logs.status).toBe('succeeded');
    expect(logs.summary.deleted).toEqual([
      expect.objectContaining({
        name: LOGS_ORPHAN,
        noSnapshot: expect.stringContaining(
          'no VolumeSnapshotClass is marked default for CSI driver rancher.io/local-path',
        ),
      }),
    ]);
    const deletions = sim.history!.claimDeletions();
    expect(deletions.map(d => d.request.name).sort()).toEqual(
      [...ORDERS_DB_ORPHANS, LOGS_ORPHAN].sort(),
    );
    for (const d of deletions)
      expect(d.readySnapshots).toHaveLength(
        d.request.name === LOGS_ORPHAN ? 0 : 1,
      );

    // What follows a prune: a snapshot kept longer (patch), the fleet's
    // snapshot totals (list), and the expiry task a week and a day later (list, delete).
    const [first, second] = orders.summary.deleted.map(d => d.snapshot!);
    const keep = await p.post('/v1/snapshots/keep', {
      snapshot: {
        entityRef: 'component:default/orders',
        cluster: 'demo',
        namespace: 'shop',
        statefulSet: 'orders-db',
        snapshot: { name: first.name, uid: first.uid },
      },
      keepUntil: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    });
    expect(keep.status).toBe(200);
    // The kept snapshots are listed, and one claim restored from its snapshot.
    const kept = await keptSnapshots(p);
    expect(kept.map(k => k.claimName).sort()).toEqual(ORDERS_DB_ORPHANS);
    const restored = kept.find(k => k.name === first.name)!;
    expect((await restoreFrom(p, restored)).status).toBe(201);
    const fleet = await p.get('/v1/fleet');
    expect(fleet.status).toBe(200);
    await withClockAhead(8 * 86_400_000, () =>
      tasks.run('pvc-pruner-snapshot-expiry'),
    );
    const snapshotDeletes = sim
      .requests()
      .filter(r => r.verb === 'delete' && r.resource === 'volumesnapshots');
    expect(snapshotDeletes.map(r => r.path)).toContainEqual(
      expect.stringContaining(second.name),
    );
    expect(snapshotDeletes.map(r => r.path)).not.toContainEqual(
      expect.stringContaining(first.name),
    );

    const mine = sim.requests().filter(r => r.user === SERVICE_ACCOUNT);
    expect(mine.filter(r => r.status === 401 || r.status === 403)).toEqual([]);
    const used = new Set(mine.map(permissionOf));
    const unused = [...grantsOf(snapshotRules)].filter(g => !used.has(g));
    expect(unused).toEqual([]);
  });

  it('without list volumesnapshots, the card’s list of kept snapshots is a failed section naming the refusal; without create persistentvolumeclaims, a restore is a 503 naming it, and nothing is created', async () => {
    const full = [...rbacRules(), ...rbacRules(SNAPSHOT_RULES)];
    let p = await startWith(full);
    const sts = statefulSetIn(await p.scan(), 'shop', 'orders-db');
    const request = pruneAll(sts);
    request.pvcs = request.pvcs.filter(c => c.name === 'data-orders-db-2');
    expect(
      (await p.waitForJob(await p.prune({ ...request, snapshot: true })))
        .status,
    ).toBe('succeeded');
    const [snapshot] = await keptSnapshots(p);
    await p.stop();

    p = await startWith(without(full, 'volumesnapshots', 'list'));
    const listed = await p.get<SnapshotsResponse>(
      `/v1/snapshots?entityRef=${encodeURIComponent(ORDERS_REF)}`,
    );
    expect(listed.status).toBe(200);
    expect(listed.body.clusters).toEqual([
      expect.objectContaining({
        ok: false,
        error: expect.objectContaining({
          message: expect.stringContaining('list volumesnapshots in shop: 403'),
        }),
      }),
    ]);
    await p.stop();

    p = await startWith(without(full, 'persistentvolumeclaims', 'create'));
    const restored = await restoreFrom(p, snapshot);
    expect(restored.status).toBe(503);
    expect(restored.body.error.message).toContain(
      'create persistentvolumeclaim shop/data-orders-db-2: 403',
    );
    expect(claimOf(sim, 'shop', 'data-orders-db-2')).toBeUndefined();
  });

  it.each([
    [
      'create',
      'volumesnapshots',
      'data-orders-db-2',
      'could not create VolumeSnapshot',
    ],
    [
      'get',
      'volumesnapshots',
      'data-orders-db-2',
      'could not read VolumeSnapshot data-orders-db-2-',
    ],
    [
      'get',
      'volumesnapshotcontents',
      'data-orders-db-2',
      'could not read VolumeSnapshotContent',
    ],
    [
      'list',
      'volumesnapshotclasses',
      'data-orders-db-2',
      'refused list volumesnapshotclasses',
    ],
    ['get', 'storageclasses', LOGS_ORPHAN, 'refused get storageclass'],
  ])(
    'without %s %s, the claim it is needed for (%s) is not deleted, and the job says why',
    async (verb, resource, held, why) => {
      const rules = [
        ...rbacRules(),
        ...without(rbacRules(SNAPSHOT_RULES), resource, verb),
      ];
      expect(grantsOf(rules).size).toBe(
        grantsOf([...rbacRules(), ...rbacRules(SNAPSHOT_RULES)]).size - 1,
      );
      const p = await startWith(rules);

      const jobs = await pruneBoth(p, ['data-orders-db-2', LOGS_ORPHAN]);

      const job = jobs.find(j => j.summary.skipped.some(s => s.name === held));
      expect(job).toMatchObject({
        status: 'incomplete',
        reason: expect.stringContaining(`${held} was not deleted`),
      });
      expect(job!.summary.skipped).toEqual([
        expect.objectContaining({
          name: held,
          reason: expect.stringContaining(why),
        }),
      ]);
      expect(claimOf(sim, 'shop', held)).toBeDefined();
      expect(deletedClaims(sim)).not.toContain(held);
      // The refusal the job met was the cluster's, for the verb taken away.
      expect(
        sim
          .requests()
          .filter(r => r.user === SERVICE_ACCOUNT && r.status === 403)
          .map(permissionOf),
      ).toContain(permissionOf({ verb, resource }));
    },
  );
});
