import type { JsonObject } from '@backstage/types';
import { knex } from 'knex';
import { historyNow, type KubeSim } from 'kube-sim';
import { schedulerServiceFactory } from '@backstage/backend-defaults/scheduler';
import type {
  FleetResponse,
  PruneJobPage,
} from 'backstage-plugin-pvc-pruner-common';
import {
  AUTO_PRUNE_ANNOTATION,
  KEEP_CLAIM_ANNOTATION,
} from 'backstage-plugin-pvc-pruner-common';
import {
  claimOf,
  component,
  heldTasks,
  kubectl,
  ORDERS_DB_ORPHANS,
  ORDERS_REF,
  Pruner,
  scale,
  sleep,
  startPruner,
  startSim,
  statefulSetIn,
  waitFor,
  waitForSettled,
} from './__testUtils__/harness';
import { recordingNotifications } from './__testUtils__/recordingNotifications';

jest.setTimeout(90000);

const TASK = 'pvc-pruner-auto-prune';
const GRACE_MS = 3000;

/** orders, opted in with a grace of 3 s. */
function orders() {
  return component('orders', 'orders', { [AUTO_PRUNE_ANNOTATION]: '3s' });
}

/** Automatic pruning with a floor low enough for a test, owners told 2 s ahead. */
const autoPrune = (extra: JsonObject = {}): JsonObject => ({
  autoPrune: {
    enabled: true,
    minimumGrace: '1s',
    notifyBefore: '2s',
    ...extra,
  },
});

function orphansLeft(sim: KubeSim): string[] {
  return ORDERS_DB_ORPHANS.filter(name => claimOf(sim, 'shop', name));
}

async function jobsOf(pruner: Pruner, entityRef = ORDERS_REF) {
  const { body } = await pruner.get<PruneJobPage>(
    `/v1/prune-jobs?entityRef=${encodeURIComponent(entityRef)}`,
  );
  return body.items;
}

async function lastRun(pruner: Pruner) {
  return (await pruner.get<FleetResponse>('/v1/fleet')).body.autoPrune?.lastRun;
}

/** Runs the held task every 300 ms until `done` holds, as the schedule would, at most `timeoutMs`. */
async function runUntil(
  tasks: ReturnType<typeof heldTasks>,
  what: string,
  done: () => boolean | Promise<boolean>,
  timeoutMs = 20000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await tasks.run(TASK);
    if (await done()) return;
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(300);
  }
}

/** Runs the held task `times` times over `ms`, as the schedule would. */
async function runFor(tasks: ReturnType<typeof heldTasks>, ms: number) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    await tasks.run(TASK);
    await sleep(300);
  }
}

describe('automatic pruning', () => {
  let sim: KubeSim;
  let pruner: Pruner | undefined;

  afterEach(async () => {
    await pruner?.stop();
    pruner = undefined;
    await sim?.close();
  });

  async function start(
    options: {
      entities?: ReturnType<typeof component>[];
      pvcPruner?: JsonObject;
    } = {},
  ) {
    sim = await startSim([], { recordHistory: true });
    const tasks = heldTasks();
    const notifications = recordingNotifications();
    pruner = await startPruner({
      sim,
      entities: options.entities ?? [orders()],
      pvcPruner: options.pvcPruner ?? autoPrune(),
      features: [
        tasks.factory,
        notifications.factory,
        notifications.notificationsPlugin,
      ],
    });
    return { tasks, notifications, pruner };
  }

  it("prunes an opted-in entity's orphans after their grace, not before, and tells its owners before and after", async () => {
    const { tasks, notifications, pruner: p } = await start();
    const scan = await p.scan();
    const sts = statefulSetIn(scan, 'shop', 'orders-db');
    expect(scan.autoPrune?.state).toBe('opted-in');
    expect(sts.autoPrune).toEqual({ automated: true });
    const firstSeen = Math.min(
      ...sts.orphans.map(o => Date.parse(o.firstSeenOrphanedAt!)),
    );
    for (const orphan of sts.orphans)
      expect(Date.parse(orphan.eligibleAt!)).toBeGreaterThanOrEqual(
        firstSeen + GRACE_MS,
      );

    await tasks.run(TASK);
    expect(orphansLeft(sim)).toEqual(ORDERS_DB_ORPHANS);
    await runUntil(
      tasks,
      'the orphans to be pruned',
      () => orphansLeft(sim).length === 0,
    );
    // Not before their grace, by the simulator's own record of each delete.
    const deletes = sim
      .history!.claimDeletions()
      .filter(d => !d.request.dryRun && d.claim);
    expect([...new Set(deletes.map(d => d.request.name))].sort()).toEqual(
      ORDERS_DB_ORPHANS,
    );
    // The simulator's clock is this process's, the first sighting the database's: they may differ by a moment.
    const CLOCKS_APART_MS = 2000;
    for (const d of deletes)
      expect(d.request.at).toBeGreaterThanOrEqual(
        firstSeen + GRACE_MS - CLOCKS_APART_MS,
      );

    const jobs = await jobsOf(p);
    const real = jobs.filter(j => !j.dryRun);
    expect(real).toHaveLength(1);
    expect(real[0]).toMatchObject({
      requestedBy: 'plugin:pvc-pruner',
      onBehalfOf: ORDERS_REF,
      status: 'succeeded',
    });
    expect(real[0].automaticRunId).toEqual(expect.any(String));
    expect(jobs.filter(j => j.dryRun)).toHaveLength(1);

    const before = notifications.sent.filter(n =>
      /will be pruned on/.test(n.payload.title),
    );
    expect(before.length).toBeGreaterThanOrEqual(1);
    expect(before[0].recipients).toEqual({
      type: 'entity',
      entityRef: ORDERS_REF,
    });
    expect(before[0].payload.title).toMatch(
      /^5 claims of orders-db will be pruned on/,
    );
    const after = notifications.sent.filter(n =>
      /pruned automatically/.test(n.payload.title),
    );
    expect(after).toHaveLength(1);
    expect(after[0].payload.title).toMatch(
      /^5 claims of orders-db pruned automatically/,
    );
    // The after notice replaces the before one in the portal.
    expect(after[0].payload.scope).toBe(
      before[before.length - 1].payload.scope,
    );
    for (const name of ORDERS_DB_ORPHANS)
      expect(after[0].payload.description).toContain(name);
    expect(await lastRun(p)).toMatchObject({ deleted: 5, status: 'finished' });
  });

  it('does not prune a claim kept through the card or with the kubectl annotation', async () => {
    const { tasks, pruner: p } = await start();
    const sts = statefulSetIn(await p.scan(), 'shop', 'orders-db');
    const byCard = sts.orphans.find(o => o.name === 'data-orders-db-2')!;
    const kept = await p.post('/v1/claim-keeps', {
      entityRef: ORDERS_REF,
      cluster: 'demo',
      namespace: 'shop',
      statefulSet: 'orders-db',
      claim: { name: byCard.name, uid: byCard.uid },
      reason: 'restoring from it next week',
    });
    expect(kept.status).toBe(201);
    await kubectl(sim, [
      'annotate',
      'pvc',
      '-n',
      'shop',
      'data-orders-db-3',
      `${KEEP_CLAIM_ANNOTATION}=true`,
    ]);
    await runUntil(
      tasks,
      'the other orphans to be pruned',
      () => orphansLeft(sim).length === 2,
    );
    await runFor(tasks, 1500);
    expect(orphansLeft(sim)).toEqual(['data-orders-db-2', 'data-orders-db-3']);
    const after = statefulSetIn(await p.scan(), 'shop', 'orders-db');
    expect(after.orphans.map(o => [o.name, o.keep?.source])).toEqual([
      ['data-orders-db-2', 'card'],
      ['data-orders-db-3', 'annotation'],
    ]);
    expect(after.orphans.every(o => o.eligibleAt === undefined)).toBe(true);
  });

  it('does not prune a claim that came back into use during its grace, and starts its grace again', async () => {
    const { tasks, pruner: p } = await start();
    await p.scan();
    // Back to 3 replicas: data-orders-db-2 is in use again.
    scale(sim, 'shop', 'orders-db', 3);
    await waitForSettled(sim);
    await runFor(tasks, 3500);
    expect(claimOf(sim, 'shop', 'data-orders-db-2')).toBeDefined();
    // Scaled down again: orphaned afresh, with a grace of its own from now.
    scale(sim, 'shop', 'orders-db', 2);
    await waitFor(
      'ordinal 2 to stop',
      () => !sim.store.get('pods', 'shop', 'orders-db-2'),
    );
    // The simulator's clock, which dates its record of each delete.
    const orphanedAgain = historyNow();
    await runUntil(
      tasks,
      'the orphans to be pruned',
      () => orphansLeft(sim).length === 0,
    );
    const deleted = sim
      .history!.claimDeletions()
      .find(d => d.request.name === 'data-orders-db-2' && !d.request.dryRun)!;
    expect(deleted.request.at).toBeGreaterThanOrEqual(orphanedAgain + GRACE_MS);
  });

  it('never automates an entity without the annotation', async () => {
    const {
      tasks,
      notifications,
      pruner: p,
    } = await start({
      entities: [component('orders')],
    });
    await p.scan();
    await runFor(tasks, 6000);
    expect(orphansLeft(sim)).toEqual(ORDERS_DB_ORPHANS);
    expect(await jobsOf(p)).toEqual([]);
    expect(notifications.sent).toEqual([]);
    expect((await p.scan()).autoPrune?.state).toBe('not-opted-in');
  });

  it('does nothing when one of two claimants has not opted in', async () => {
    const second = component('orders-dashboards', 'orders');
    const {
      tasks,
      notifications,
      pruner: p,
    } = await start({
      entities: [orders(), second],
    });
    await p.scan();
    await runFor(tasks, 6000);
    expect(orphansLeft(sim)).toEqual(ORDERS_DB_ORPHANS);
    expect(await jobsOf(p)).toEqual([]);
    expect(notifications.sent).toEqual([]);
    const sts = statefulSetIn(await p.scan(), 'shop', 'orders-db');
    expect(sts.autoPrune?.automated).toBe(false);
    expect(sts.autoPrune?.reason).toMatch(
      /component:default\/orders-dashboards/,
    );
  });

  it('stops the run at maxClaimsPerRun and says so', async () => {
    const { tasks, pruner: p } = await start({
      pvcPruner: autoPrune({ maxClaimsPerRun: 2 }),
    });
    await p.scan();
    await runUntil(tasks, 'a run to prune', () => orphansLeft(sim).length < 5);
    expect(orphansLeft(sim)).toHaveLength(3);
    const run = await lastRun(p);
    expect(run).toMatchObject({ status: 'stopped-at-limit', deleted: 2 });
    expect(run?.stoppedBecause).toMatch(/maxClaimsPerRun/);
  });

  it('does not prune when the dry run fails, and tells the owners why', async () => {
    const { tasks, notifications, pruner: p } = await start();
    await p.scan();
    sim.addFault({
      verb: 'delete',
      resource: 'persistentvolumeclaims',
      status: 403,
      message: 'injected: deletes of claims are forbidden',
    });
    await runUntil(tasks, 'a dry run', async () =>
      (await jobsOf(p)).some(j => j.dryRun),
    );
    await runFor(tasks, 1000);
    sim.clearFaults();
    const jobs = await jobsOf(p);
    expect(jobs.filter(j => !j.dryRun)).toEqual([]);
    expect(orphansLeft(sim)).toEqual(ORDERS_DB_ORPHANS);
    const told = notifications.sent.find(n =>
      /not pruned: the dry run failed/.test(n.payload.title),
    );
    expect(told?.payload.description).toMatch(/forbidden/);
    expect((await lastRun(p))?.dryRunFailures).toBe(1);
  });
});

describe('automatic pruning on two replicas', () => {
  it('runs once per schedule across two backends sharing a database', async () => {
    const server = Object.entries(process.env).find(([key]) =>
      /^BACKSTAGE_TEST_DATABASE_POSTGRES\d+_CONNECTION_STRING$/.test(key),
    )?.[1];
    if (!server)
      throw new Error(
        'needs PostgreSQL: run it with test/setup/with-test-services.sh postgres',
      );
    const prefix = `pvcauto${process.pid}_`;
    const sim = await startSim([], { recordHistory: true });
    const notifications = recordingNotifications();
    const pruners: Pruner[] = [];
    const url = new URL(server);
    const connection = {
      host: url.hostname,
      port: Number(url.port || 5432),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
    };
    const pluginDb = knex({
      client: 'pg',
      connection: { ...connection, database: `${prefix}pvc-pruner` },
    });
    try {
      for (let i = 0; i < 2; i++)
        pruners.push(
          await startPruner({
            sim,
            entities: [orders()],
            database: { client: 'pg', connection, prefix },
            pvcPruner: autoPrune({
              schedule: { frequency: { seconds: 2 }, timeout: { seconds: 30 } },
            }),
            features: [
              schedulerServiceFactory,
              notifications.factory,
              notifications.notificationsPlugin,
            ],
          }),
        );
      await pruners[0].scan();
      // The whole suite shares 2 cores in CI: allow the runs time, and say what they did if they ran out of it.
      await waitFor(
        'the orphans to be pruned',
        () => orphansLeft(sim).length === 0,
        60000,
      ).catch(async e => {
        const runs = await pluginDb('pvc_pruner_auto_prune_runs')
          .select(
            'status',
            'considered',
            'eligible',
            'deleted',
            'stopped_because',
            'outcomes',
          )
          .orderBy('started_at');
        throw new Error(`${e.message}; runs: ${JSON.stringify(runs)}`);
      });
      await sleep(4000);
      const runs = await pluginDb('pvc_pruner_auto_prune_runs')
        .select('started_at', 'finished_at')
        .orderBy('started_at');
      // One run per 2 s between both backends, never two at once.
      for (let i = 1; i < runs.length; i++)
        expect(new Date(runs[i].started_at).getTime()).toBeGreaterThanOrEqual(
          new Date(runs[i - 1].finished_at).getTime(),
        );
      const span =
        new Date(runs[runs.length - 1].started_at).getTime() -
        new Date(runs[0].started_at).getTime();
      expect(runs.length).toBeLessThanOrEqual(Math.floor(span / 2000) + 2);
      // The orphans went in one prune, not one per replica.
      const jobs = await jobsOf(pruners[0]);
      expect(jobs.filter(j => !j.dryRun)).toHaveLength(1);
    } finally {
      for (const p of pruners) await p.stop().catch(() => undefined);
      await sim.close();
      await pluginDb.destroy();
      const admin = knex({ client: 'pg', connection: server });
      await admin
        .raw(`DROP DATABASE IF EXISTS "${prefix}pvc-pruner" WITH (FORCE)`)
        .finally(() => admin.destroy());
    }
  });
});
