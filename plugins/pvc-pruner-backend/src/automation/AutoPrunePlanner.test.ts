import { mockServices } from '@backstage/backend-test-utils';
import type { Knex } from 'knex';
import { ConfigReader } from '@backstage/config';
import type { ClaimKeep } from 'backstage-plugin-pvc-pruner-common';
import {
  horizontalPodAutoscaler,
  KubeObject,
  KubeSim,
  pod,
  pvc,
  statefulSet,
} from 'kube-sim';
import { catalogOf, componentEntity } from '../__testUtils__/catalogEntities';
import { gatewaysTo, startShopSimulator } from '../__testUtils__/shopSimulator';
import { storeTestDatabases } from '../__testUtils__/testDatabases';
import { OrphanSightingStore } from '../database';
import { ClusterCaches, KubeGateways } from '../kubernetes';
import { InUseClaimsSweeper, OrphanAnnotator, OrphanFinder } from '../orphans';
import { WATCH_CACHE_TRIMMERS } from '../orphans/orphanRule';
import { AutoPrunePlanner } from './AutoPrunePlanner';
import { readAutoPruneOptions } from './autoPruneOptions';
import type { AutoPrunePlan } from './types';

jest.setTimeout(20000);

const databases = storeTestDatabases();
const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.parse('2026-12-01T00:00:00.000Z');

let sim: KubeSim;
let gateways: KubeGateways;
let caches: ClusterCaches;
let clock: number;
let namespace: string;
let tests = 0;
let sightings: OrphanSightingStore;
let knex: Knex;
/** Card keeps by claim uid, and the batches the planner asked for. */
let cardKeeps: Map<string, ClaimKeep>;
let keepBatches: Array<{ cluster: string; uids: readonly string[] }>;

const optedIn = (grace: string) => ({
  'pvc-pruner.backstage.io/auto-prune': grace,
});

/** orders (7d), search and search-twin (both 1d, one StatefulSet), ledger (1d, but ledger-reader shares it) opted in; cart not. */
const CATALOG = catalogOf([
  componentEntity('orders', {
    annotations: { 'backstage.io/kubernetes-id': 'orders', ...optedIn('7d') },
  }),
  componentEntity('cart'),
  componentEntity('search-twin', {
    annotations: { 'backstage.io/kubernetes-id': 'search', ...optedIn('1d') },
  }),
  componentEntity('search', {
    annotations: { 'backstage.io/kubernetes-id': 'search', ...optedIn('1d') },
  }),
  componentEntity('ledger', {
    annotations: { 'backstage.io/kubernetes-id': 'ledger', ...optedIn('1d') },
  }),
  componentEntity('ledger-reader', {
    annotations: { 'backstage.io/kubernetes-label-selector': 'app=ledger-db' },
  }),
]);

const OPTIONS = readAutoPruneOptions(
  new ConfigReader({
    autoPrune: { enabled: true, minimumGrace: '1d', notifyBefore: '2d' },
  }),
);

/** StatefulSet `<id>-db` of one replica, labelled as entity `id` claims it, with claims of ordinals 0..claims-1. */
function seedStatefulSet(id: string, claims: number) {
  const labels = { app: `${id}-db`, 'backstage.io/kubernetes-id': id };
  sim.store.create(
    'apps/statefulsets',
    statefulSet(`${id}-db`, { replicas: 1 }, namespace, labels),
  );
  for (let i = 0; i < claims; i++) seedClaim(id, i);
}

function seedClaim(id: string, ordinal: number, annotations?: object) {
  const claim = pvc(`data-${id}-db-${ordinal}`, {}, namespace, {
    app: `${id}-db`,
  });
  if (annotations) claim.metadata.annotations = annotations as any;
  sim.store.create('persistentvolumeclaims', claim);
}

const uidOf = (name: string) =>
  sim.store.get('persistentvolumeclaims', namespace, name)!.metadata.uid!;

function planner(options = OPTIONS) {
  return new AutoPrunePlanner({
    catalog: CATALOG,
    finder: new OrphanFinder(gateways, caches, new OrphanAnnotator(sightings)),
    databaseNow: sightings.now,
    firstSightings: uids => sightings.firstSeenInDatabase(uids),
    keeps: {
      keepsOf: async (cluster, uids) => {
        keepBatches.push({ cluster, uids });
        return new Map(
          uids.flatMap(uid => {
            const keep = cardKeeps.get(uid);
            return keep ? [[uid, keep] as const] : [];
          }),
        );
      },
    },
    options,
  });
}

/** Plans once the cache is synced and `done` holds (the cache has what the test changed), at most 5 s. */
async function planUntil(done: (plan: AutoPrunePlan) => boolean = () => true) {
  const p = planner();
  let plan: AutoPrunePlan | undefined;
  await eventuallyAsync('a plan from the synced cache', async () => {
    plan = await p.plan();
    return plan.clustersFailed.length === 0 && done(plan);
  });
  return plan!;
}

/** Polls an async check every 20 ms, at most 5 s. */
async function eventuallyAsync(what: string, check: () => Promise<boolean>) {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise(r => setTimeout(r, 20));
  }
}

const groupOf = (plan: AutoPrunePlan, name: string) =>
  plan.groups.find(g => g.statefulSet === name);

const names = (claims: Array<{ name: string }> | undefined) =>
  claims?.map(c => c.name);

beforeAll(async () => {
  ({ sim } = await startShopSimulator());
  gateways = gatewaysTo(sim);
});

beforeEach(async () => {
  // The last test's StatefulSets go; its claims stay, terminating behind their protection finalizer, so a namespace per test.
  for (const o of sim.store.list('apps/statefulsets', {}).items)
    sim.store.delete(
      'apps/statefulsets',
      o.metadata.namespace,
      o.metadata.name,
    );
  namespace = `shop-${++tests}`;
  sim.store.create('namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace },
  } as KubeObject);
  clock = T0;
  knex = await databases.init('SQLITE_3');
  sightings = await OrphanSightingStore.create({
    database: { getClient: async () => knex, migrations: { skip: false } },
    now: () => new Date(clock),
  });
  cardKeeps = new Map();
  keepBatches = [];
  caches = new ClusterCaches({
    trim: WATCH_CACHE_TRIMMERS,
    logger: mockServices.logger.mock(),
    syncWaitMs: 5000,
    timing: { minBackoffMs: 20, maxBackoffMs: 100, minWatchMs: 0 },
  });
});

afterEach(async () => {
  await caches.stop();
  sim.clearFaults();
});

afterAll(async () => {
  await sim.close();
});

describe('AutoPrunePlanner', () => {
  it("plans an opted-in entity's orphan once its grace has passed since its first sighting, by the database's clock, and tells of it within notifyBefore", async () => {
    seedStatefulSet('orders', 2);
    const first = await planUntil(plan => plan.considered === 1);
    expect(first.groups).toEqual([]);

    clock = T0 + 5 * DAY + 1; // 2 days before its grace of 7 ends
    const soon = await planner().plan();
    expect(soon.groups).toEqual([
      expect.objectContaining({
        cluster: 'demo',
        namespace,
        statefulSet: 'orders-db',
        through: expect.objectContaining({
          entityRef: 'component:default/orders',
        }),
        claimants: ['component:default/orders'],
        graceMs: 7 * DAY,
        eligible: [],
        upcoming: [
          expect.objectContaining({
            name: 'data-orders-db-1',
            ordinal: 1,
            bytes: 2 ** 30,
            eligibleAt: new Date(T0 + 7 * DAY).toISOString(),
            retained: false,
          }),
        ],
      }),
    ]);

    // A younger orphan appears, first seen now.
    seedClaim('orders', 2);
    await planUntil(plan => plan.considered === 2);
    clock = T0 + 7 * DAY;
    const due = await planner().plan();
    expect(names(groupOf(due, 'orders-db')?.eligible)).toEqual([
      'data-orders-db-1',
    ]);
    // Eligible 2 days after the first, 5 days from now: not yet told either.
    expect(groupOf(due, 'orders-db')?.upcoming).toEqual([]);
    expect(due.considered).toBe(2);
  });

  it('judges eligibility by the first sightings the database holds, not by what this replica remembers: another replica may have seen the claim in use since', async () => {
    seedStatefulSet('orders', 2);
    await planUntil(plan => plan.considered === 1);
    clock = T0 + 7 * DAY;
    expect(
      names(groupOf(await planner().plan(), 'orders-db')?.eligible),
    ).toEqual(['data-orders-db-1']);
    // Another replica saw it mounted and forgot its sighting; this one still remembers the old one.
    await knex('pvc_pruner_orphan_sightings')
      .where('uid', uidOf('data-orders-db-1'))
      .delete();
    const plan = await planner().plan();
    expect(plan.considered).toBe(1);
    expect(groupOf(plan, 'orders-db')?.eligible ?? []).toEqual([]);
  });

  it('never plans a StatefulSet of an entity that has not opted in, nor one that a claimant not opted in shares', async () => {
    seedStatefulSet('cart', 2);
    seedStatefulSet('ledger', 2);
    seedStatefulSet('orders', 2);
    await planUntil(plan => plan.considered === 1);
    clock = T0 + 30 * DAY;
    const plan = await planner().plan();
    expect(plan.groups.map(g => g.statefulSet)).toEqual(['orders-db']);
    expect(plan.considered).toBe(1);
  });

  it('plans a StatefulSet that two opted-in entities claim once, through the first of them by ref, with the longest grace', async () => {
    seedStatefulSet('search', 3);
    await planUntil(plan => plan.considered === 2);
    clock = T0 + DAY;
    const plan = await planner().plan();
    expect(plan.considered).toBe(2);
    expect(plan.groups).toHaveLength(1);
    expect(plan.groups[0]).toMatchObject({
      statefulSet: 'search-db',
      through: { entityRef: 'component:default/search' },
      claimants: ['component:default/search', 'component:default/search-twin'],
      graceMs: DAY,
    });
    expect(names(plan.groups[0].eligible)).toEqual([
      'data-search-db-1',
      'data-search-db-2',
    ]);
    expect(keepBatches.at(-1)).toEqual({
      cluster: 'demo',
      uids: [uidOf('data-search-db-1'), uidOf('data-search-db-2')],
    });
  });

  it('keeps a claim kept through the card or by its annotation out of the eligible ones, saying why', async () => {
    seedStatefulSet('orders', 2);
    seedClaim('orders', 2, { 'pvc-pruner.backstage.io/keep': 'true' });
    seedClaim('orders', 3, { 'pvc-pruner.backstage.io/keep': 'false' });
    seedClaim('orders', 4);
    const cardKeep: ClaimKeep = {
      source: 'card',
      reason: 'restoring from it',
      keptBy: 'user:default/ana',
      keptAt: new Date(T0).toISOString(),
    };
    cardKeeps.set(uidOf('data-orders-db-4'), cardKeep);
    await planUntil(plan => plan.considered === 4);
    clock = T0 + 8 * DAY;
    const plan = await planner().plan();
    const group = groupOf(plan, 'orders-db')!;
    expect(names(group.eligible)).toEqual([
      'data-orders-db-1',
      'data-orders-db-3',
    ]);
    expect(group.kept).toEqual([
      {
        name: 'data-orders-db-2',
        uid: uidOf('data-orders-db-2'),
        keep: {
          source: 'annotation',
          reason: 'annotated pvc-pruner.backstage.io/keep=true',
        },
      },
      {
        name: 'data-orders-db-4',
        uid: uidOf('data-orders-db-4'),
        keep: cardKeep,
      },
    ]);
  });

  it('does not plan a claim that a pod mounts again: it is no orphan', async () => {
    seedStatefulSet('orders', 2);
    await planUntil(plan => plan.considered === 1);
    sim.store.create(
      'pods',
      pod('restore-check', ['data-orders-db-1'], {}, namespace),
    );
    clock = T0 + 8 * DAY;
    const plan = await planUntil(p => p.considered === 0);
    expect(plan.groups).toEqual([]);
  });

  it("never plans a claim the orphan rule keeps: terminating, or in an autoscaler's range", async () => {
    seedStatefulSet('orders', 5);
    sim.store.delete('persistentvolumeclaims', namespace, 'data-orders-db-1');
    sim.store.create(
      'autoscaling/horizontalpodautoscalers',
      horizontalPodAutoscaler(
        'orders',
        'orders-db',
        { maxReplicas: 3 },
        namespace,
      ),
    );
    await planUntil(plan => plan.considered === 2);
    clock = T0 + 8 * DAY;
    const plan = await planner().plan();
    expect(names(groupOf(plan, 'orders-db')?.eligible)).toEqual([
      'data-orders-db-3',
      'data-orders-db-4',
    ]);
  });

  it('plans nothing in a cluster whose watch cache is not synced, and reads nothing from the API server instead', async () => {
    seedStatefulSet('orders', 2);
    sim.clearRequests();
    const plan = await planner().plan();
    expect(plan).toEqual({
      considered: 0,
      groups: [],
      clustersFailed: [
        {
          cluster: 'demo',
          error: expect.stringContaining('watch cache'),
        },
      ],
    });
    // The cache it started lists and watches whole kinds; nothing a live scan reads: a selector, a namespace, one object.
    await eventuallyAsync('the cache to start listing', async () =>
      sim.requests().some(r => r.verb === 'list'),
    );
    expect(
      sim
        .requests()
        .filter(
          r =>
            r.namespace !== undefined ||
            r.verb === 'get' ||
            r.query.includes('labelSelector'),
        ),
    ).toEqual([]);
    expect(keepBatches).toEqual([]);
  });

  it('plans nothing in a cluster whose watch cache is disconnected: it may have missed a pod that used a claim', async () => {
    seedStatefulSet('orders', 2);
    await planUntil(plan => plan.considered === 1);
    clock = T0 + 8 * DAY;
    expect(
      names(groupOf(await planner().plan(), 'orders-db')?.eligible),
    ).toEqual(['data-orders-db-1']);

    sim.addFault({ verb: 'watch', resource: 'pods', status: 503 });
    sim.dropWatches();
    await new Promise(r => setTimeout(r, 1100));
    const plan = await planner().plan();

    expect(plan.groups).toEqual([]);
    expect(plan.clustersFailed).toEqual([
      {
        cluster: 'demo',
        error: expect.stringMatching(/disconnected for \d+s \(pods\)/),
      },
    ]);
  });

  it('starts the grace again for a claim a pod mounted for a while between two runs, with no scan meanwhile', async () => {
    seedStatefulSet('orders', 2);
    await planUntil(plan => plan.considered === 1);
    const sweeper = new InUseClaimsSweeper({ caches, sightings });
    await sweeper.sweep();

    // Eight days later, a backup Job mounts the orphan for ten minutes; nobody opens a card.
    clock = T0 + 8 * DAY;
    sim.store.create(
      'pods',
      pod('backup', ['data-orders-db-1'], {}, namespace),
    );
    await eventuallyAsync('the cache has the backup pod', async () =>
      Boolean(caches.readyCaches()[0]?.cache.pods.get(namespace, 'backup')),
    );
    await sweeper.sweep();
    sim.store.delete('pods', namespace, 'backup', { gracePeriodSeconds: 0 });
    await eventuallyAsync(
      'the backup pod gone from the cache',
      async () => !caches.readyCaches()[0]?.cache.pods.get(namespace, 'backup'),
    );

    clock = T0 + 8 * DAY + 60_000;
    const plan = await planner().plan();
    expect(groupOf(plan, 'orders-db')?.eligible ?? []).toEqual([]);
    // Its grace of 7 days starts again now: first seen anew at this run.
    const [firstSeen] = (
      await sightings.firstSeenInDatabase([uidOf('data-orders-db-1')])
    ).values();
    expect(firstSeen).toBe(new Date(clock).toISOString());
  });

  it('plans nothing when automatic pruning is not enabled', async () => {
    seedStatefulSet('orders', 2);
    sim.clearRequests();
    const plan = await planner({ ...OPTIONS, enabled: false }).plan();
    expect(plan).toEqual({ considered: 0, groups: [], clustersFailed: [] });
    expect(sim.requests()).toEqual([]);
  });
});
