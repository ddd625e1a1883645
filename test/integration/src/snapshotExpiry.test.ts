import type { KubeObject, KubeSim } from 'kube-sim';
import { snapshotNames } from 'kube-sim';
import {
  heldTasks,
  keptAuditEvents,
  ORDERS_DB_ORPHANS,
  ORDERS_REF,
  pruneAll,
  Pruner,
  startPruner,
  startSim,
  statefulSetIn,
  waitFor,
  withClockAhead,
} from './__testUtils__/harness';

jest.setTimeout(60000);

const DAY_MS = 86_400_000;
const EXPIRY_TASK = 'pvc-pruner-snapshot-expiry';
const KEEP_UNTIL = 'pvc-pruner.backstage.io/keep-until';

/** A VolumeSnapshotClass of the simulator's driver that keeps the storage's snapshot when its VolumeSnapshot goes. */
const RETAIN_CLASS = {
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshotClass',
  metadata: { name: 'sim-snapshots-retain' },
  driver: 'sim.csi.k8s.io',
  deletionPolicy: 'Retain',
} as unknown as KubeObject;

const snapshotsIn = (sim: KubeSim, namespace: string): KubeObject[] =>
  sim.store.list(snapshotNames.SNAPSHOTS, { namespace }).items;
const contentOf = (sim: KubeSim, name: string) =>
  sim.store.get(snapshotNames.CONTENTS, undefined, name);

describe('the snapshot expiry task, judged from the simulator', () => {
  let sim: KubeSim;
  let pruner: Pruner;

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  it.each([
    ['Delete', undefined],
    ['Retain', RETAIN_CLASS],
  ])(
    'deletes the snapshots past their retention (class deletionPolicy %s), keeps the one kept longer, audits each and tells the job',
    async (deletionPolicy, extraClass) => {
      sim = await startSim(extraClass ? [extraClass] : [], {
        recordHistory: true,
      });
      const tasks = heldTasks();
      const audit = keptAuditEvents();
      pruner = await startPruner({
        sim,
        pvcPruner: {
          snapshots: {
            enabled: true,
            retentionDays: 7,
            ...(extraClass
              ? { storageClasses: { standard: 'sim-snapshots-retain' } }
              : {}),
          },
        },
        features: [tasks.factory, audit.factory],
      });
      const sts = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');
      const id = await pruner.prune({ ...pruneAll(sts), snapshot: true });
      const job = await pruner.waitForJob(id);
      expect(job.status).toBe('succeeded');

      const taken = snapshotsIn(sim, 'shop');
      expect(taken).toHaveLength(ORDERS_DB_ORPHANS.length);
      const contents = new Map(
        taken.map(s => [
          s.metadata.name,
          s.status?.boundVolumeSnapshotContentName as string,
        ]),
      );
      contents.forEach(c => expect(contentOf(sim, c)).toBeDefined());

      // One of them kept 30 days by the keep route, as the card would ask.
      const [keptOne, ...others] = taken;
      const keepUntil = new Date(Date.now() + 30 * DAY_MS).toISOString();
      const keep = await pruner.post('/v1/snapshots/keep', {
        snapshot: {
          entityRef: ORDERS_REF,
          cluster: 'demo',
          namespace: 'shop',
          statefulSet: 'orders-db',
          snapshot: { name: keptOne.metadata.name, uid: keptOne.metadata.uid },
        },
        keepUntil,
      });
      expect(keep.status).toBe(200);
      expect(keep.body).toMatchObject({
        name: keptOne.metadata.name,
        keepUntil,
        expiresAt: keepUntil,
      });

      // Not yet expired: the task deletes nothing.
      await tasks.run(EXPIRY_TASK);
      expect(snapshotsIn(sim, 'shop')).toHaveLength(ORDERS_DB_ORPHANS.length);

      // Eight days on, past the 7 days' retention (the plugin judges by this process's clock).
      await withClockAhead(8 * DAY_MS, () => tasks.run(EXPIRY_TASK));

      await waitFor(
        'the expired snapshots to go',
        () => snapshotsIn(sim, 'shop').length === 1,
      );
      expect(snapshotsIn(sim, 'shop').map(s => s.metadata.name)).toEqual([
        keptOne.metadata.name,
      ]);
      expect(
        snapshotsIn(sim, 'shop')[0].metadata.annotations?.[KEEP_UNTIL],
      ).toBe(keepUntil);

      // The simulator's own record: each expired snapshot was deleted by its uid, the kept one never.
      const deleted = sim
        .history!.snapshotEvents()
        .filter(e => e.event === 'deleted');
      expect(deleted.map(e => e.uid).sort()).toEqual(
        others.map(s => s.metadata.uid).sort(),
      );
      const deletes = sim
        .requests()
        .filter(r => r.verb === 'delete' && r.resource === 'volumesnapshots');
      expect(deletes).toHaveLength(others.length);

      // The content went with its snapshot, or stayed, as the class says.
      const expiredContents = others.map(s => contents.get(s.metadata.name)!);
      const retained = deletionPolicy === 'Retain';
      await waitFor(
        "the expired snapshots' contents to go (Delete) or stay (Retain)",
        () =>
          retained ||
          expiredContents.every(c => contentOf(sim, c) === undefined),
      );
      expect(expiredContents.map(c => contentOf(sim, c) !== undefined)).toEqual(
        expiredContents.map(() => retained),
      );
      expect(
        contentOf(sim, contents.get(keptOne.metadata.name)!),
      ).toBeDefined();

      const expired = audit.events.filter(
        e => e.options.eventId === 'snapshot-expired',
      );
      expect(expired.map(e => e.outcome)).toEqual(others.map(() => 'success'));
      expect(expired.map(e => (e.options.meta as any).snapshot).sort()).toEqual(
        others.map(s => s.metadata.name).sort(),
      );
      expect(expired[0].options).toMatchObject({
        severityLevel: 'medium',
        meta: {
          cluster: 'demo',
          namespace: 'shop',
          statefulSet: 'orders-db',
        },
      });
      expect(
        audit.events.filter(e => e.options.eventId === 'snapshot-keep'),
      ).toEqual([expect.objectContaining({ outcome: 'success' })]);

      const history = await pruner.events(id);
      expect(
        history
          .filter(e => e.type === 'snapshot-expired')
          .map(e => e.pvc)
          .sort(),
      ).toEqual(
        others
          .map(
            s => s.metadata.annotations?.['pvc-pruner.backstage.io/claim-name'],
          )
          .sort(),
      );
      expect(history.filter(e => e.type === 'snapshot-kept')).toEqual([
        expect.objectContaining({
          pvc: keptOne.metadata.annotations?.[
            'pvc-pruner.backstage.io/claim-name'
          ],
        }),
      ]);
    },
  );

  it('the fleet counts and prices the kept snapshots of the StatefulSets it lists', async () => {
    sim = await startSim([], { recordHistory: true });
    pruner = await startPruner({
      sim,
      pvcPruner: {
        snapshots: { enabled: true },
        pricing: {
          currency: 'EUR',
          defaultPricePerGiBMonth: 0.1,
          snapshotPricePerGiBMonth: 0.05,
        },
      },
    });
    const sts = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');
    // Two of its orphans pruned with snapshots; the others keep it in the fleet.
    const request = pruneAll(sts);
    request.pvcs = request.pvcs.filter(c =>
      ['data-orders-db-4', 'wal-orders-db-3'].includes(c.name),
    );
    const job = await pruner.waitForJob(
      await pruner.prune({ ...request, snapshot: true }),
    );
    expect(job.status).toBe('succeeded');
    const taken = snapshotsIn(sim, 'shop');
    expect(taken).toHaveLength(2);
    const bytes = taken
      .map(s => s.status?.restoreSize as string)
      .map(size => Number(size.replace(/Gi$/, '')) * 2 ** 30)
      .reduce((a, b) => a + b, 0);

    const fleet = await pruner.get('/v1/fleet');
    expect(fleet.status).toBe(200);
    expect(fleet.body.totals.snapshots).toEqual({
      snapshots: 2,
      bytes,
      monthlyCost: expect.closeTo((bytes / 2 ** 30) * 0.05),
    });
    expect(fleet.body.pricing.snapshotPricePerGiBMonth).toBe(0.05);
  });
});
