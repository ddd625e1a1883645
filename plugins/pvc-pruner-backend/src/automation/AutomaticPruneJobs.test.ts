import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import type { Entity } from '@backstage/catalog-model';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import type { PruneJob } from 'backstage-plugin-pvc-pruner-common';
import { AUTO_PRUNE_ANNOTATION } from 'backstage-plugin-pvc-pruner-common';
import { KubeObject, KubeSim, statefulSet } from 'kube-sim';
import { eventually } from '../__testUtils__/eventually';
import {
  annotateKept,
  AUTO_PRUNE_ENABLED,
  claimExists,
  createUnusedClaims,
  removeShopClaims,
} from '../__testUtils__/shopClaims';
import { componentEntity } from '../__testUtils__/catalogEntities';
import { FencedClaimKeeps } from '../__testUtils__/fencedClaimKeeps';
import { startMemoryJobStore } from '../__testUtils__/memoryJobStore';
import { recordingAuditor } from '../__testUtils__/recordingAuditor';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import { TEST_SEAL } from '../__testUtils__/testSeal';
import { PruneJobStore } from '../database';
import {
  JobEvents,
  LeaseLock,
  PruneJobs,
  PruneRunner,
  VolumeFollower,
} from '../jobs';
import { KubeGateway, KubeGateways } from '../kubernetes';
import { RunningJobLimits } from '../limits';
import {
  ClaimantIndex,
  NamespaceOwners,
  OwnershipChecks,
  OwnershipGuards,
  workloadEntityOf,
  WorkloadEntity,
} from '../ownership';
import { SnapshotSteps } from '../snapshots';
import type { AutoPruneOptions } from './autoPruneOptions';
import { AutomaticPruneGuard } from './AutomaticPruneGuard';
import { AUTOMATIC_REASON, AutomaticPruneJobs } from './AutomaticPruneJobs';
import { KeepSteps } from './KeepSteps';

/*
 * Automatic prunes through the real PruneJobs and PruneRunner against the
 * simulator (no controllers). The permission framework allows the plugin's
 * own principal everything, as Backstage's does: nothing here may rest on it.
 */

let sim: KubeSim;
let gateway: KubeGateway;
let store: PruneJobStore;
let closeStore: () => Promise<void>;
let prunes: PruneJobs;
/** The catalog as the next fresh read finds it. */
let entities: Entity[];
let reads: number;
/** Runs once the job has prepared its claims, before their last check. */
let midJob: () => void;

const optedIn = (name: string, grace = '7d', extra = {}) =>
  componentEntity(name, {
    annotations: {
      'backstage.io/kubernetes-id': name,
      [AUTO_PRUNE_ANNOTATION]: grace,
      ...extra,
    },
  });

const autoPrune = AUTO_PRUNE_ENABLED;

const workloads = {
  fresh: async () => {
    reads++;
    return new ClaimantIndex(entities.flatMap(e => workloadEntityOf(e) ?? []));
  },
};

function automaticJobs(
  options: {
    autoPrune?: AutoPruneOptions;
    snapshotsEnabled?: boolean;
    namespaceOwnerAnnotation?: string;
  },
  keeps: FencedClaimKeeps,
) {
  const { auditor, events } = recordingAuditor();
  const namespaceOwners = new NamespaceOwners(options.namespaceOwnerAnnotation);
  const jobs = new AutomaticPruneJobs({
    jobs: prunes,
    auth: {
      getOwnServiceCredentials: async () =>
        mockCredentials.service('plugin:pvc-pruner'),
    },
    auditor,
    logger: mockServices.logger.mock(),
    workloads,
    namespaceOwners,
    keeps,
    guard: new AutomaticPruneGuard({
      options: options.autoPrune ?? autoPrune,
      workloads,
    }),
    options: options.autoPrune ?? autoPrune,
    snapshotsEnabled: options.snapshotsEnabled ?? false,
  });
  return { jobs, audits: events, keeps };
}

function startPruneJobs(keeps: FencedClaimKeeps, snapshotsEnabled = false) {
  const permissions = mockServices.permissions({
    result: AuthorizeResult.ALLOW,
  });
  const ownership = new OwnershipChecks({
    permissions,
    workloads: { ...workloads, warm: workloads.fresh } as never,
    namespaceOwners: new NamespaceOwners(),
  });
  const events = new JobEvents(store);
  prunes = new PruneJobs(
    {
      store,
      runner: new PruneRunner(
        store,
        events,
        new VolumeFollower(500),
        { renewIntervalMs: 60_000 },
        [new OwnershipGuards(ownership, workloads as never)],
        [
          new KeepSteps(keeps),
          new SnapshotSteps({
            events,
            seal: TEST_SEAL,
            options: {
              enabled: snapshotsEnabled,
              retentionDays: 7,
              timeoutMs: 1000,
              required: false,
              classByStorageClass: new Map(),
              maxKeepDays: 30,
            },
          }),
        ],
      ),
      gateways: { for: async () => gateway } as unknown as KubeGateways,
      lock: new LeaseLock({
        leaseDurationSeconds: 30,
        holderPrefix: 'backstage-a',
        clock: store,
      }),
      limits: new RunningJobLimits(store, { perUser: 5, perStatefulSet: 3 }),
      logger: mockServices.logger.mock(),
      ownership,
    },
    { heartbeatMs: 60_000, snapshotsEnabled },
  );
}

/** PruneJobs, and automatic jobs over it; `midJob` runs as the job prepares its claims. */
function setUp(options: Parameters<typeof automaticJobs>[0] = {}) {
  const keeps = new FencedClaimKeeps();
  keeps.onKeepsOf = () => midJob();
  startPruneJobs(keeps, options.snapshotsEnabled);
  return automaticJobs(options, keeps);
}

beforeAll(async () => {
  ({ sim, gateway } = await startShopSimulator());
});

afterAll(async () => {
  await sim.close();
});

beforeEach(async () => {
  ({ store, close: closeStore } = await startMemoryJobStore());
  entities = [optedIn('orders')];
  reads = 0;
  midJob = () => {};
  sim.store.create(
    'apps/statefulsets',
    statefulSet('orders-db', { replicas: 1 }, 'shop', {
      'backstage.io/kubernetes-id': 'orders',
    }),
  );
});

afterEach(async () => {
  await prunes.shutdown();
  removeShopClaims(sim);
  for (const kind of ['apps/statefulsets', 'coordination.k8s.io/leases'])
    for (const item of sim.store.list(kind).items)
      sim.store.delete(kind, 'shop', item.metadata.name, {});
  await closeStore();
});

const createClaims = (names: string[]) => createUnusedClaims(sim, names);
const exists = (name: string) => claimExists(sim, name);

const orders = (): WorkloadEntity => workloadEntityOf(optedIn('orders'))!;

function startOrders(
  jobs: AutomaticPruneJobs,
  pvcs: Array<{ name: string; uid: string }>,
  extra: Record<string, unknown> = {},
) {
  return jobs.start({
    request: {
      cluster: 'demo',
      namespace: 'shop',
      statefulSet: 'orders-db',
      pvcs,
      ...extra,
    },
    onBehalfOf: orders(),
    runId: 'run-1',
  });
}

async function ended(job: PruneJob): Promise<PruneJob> {
  for (let i = 0; i < 500; i++) {
    const now = await store.getJob(job.id);
    if (now && !['queued', 'running'].includes(now.status)) return now;
    await new Promise(r => setTimeout(r, 10));
  }
  throw new Error(`job ${job.id} did not end`);
}

describe('AutomaticPruneJobs', () => {
  it('prunes as the plugin itself on behalf of the entity, stored and audited as automatic, in the entity’s history', async () => {
    const { jobs, audits } = setUp();
    const pvcs = createClaims(['data-orders-db-1']);

    const job = await startOrders(jobs, pvcs);

    expect(job).toMatchObject({
      requestedBy: 'plugin:pvc-pruner',
      entityRef: 'component:default/orders',
      onBehalfOf: 'component:default/orders',
      automaticRunId: 'run-1',
      claimants: ['component:default/orders'],
    });
    expect((await ended(job)).status).toBe('succeeded');
    expect(exists('data-orders-db-1')).toBe(false);
    expect((await store.listEvents(job.id))[0].message).toBe(
      "Automatic prune of 1 claim of StatefulSet shop/orders-db, per component:default/orders's auto-prune annotation (7d); queued by plugin:pvc-pruner in run run-1",
    );
    const page = await store.listJobs({
      entityRef: 'component:default/orders',
    });
    expect(page.items.map(j => j.id)).toEqual([job.id]);
    expect(audits).toEqual([
      expect.objectContaining({
        options: expect.objectContaining({
          eventId: 'prune',
          meta: expect.objectContaining({
            actor: 'plugin:pvc-pruner',
            automatic: true,
            onBehalfOf: 'component:default/orders',
            runId: 'run-1',
            reason: AUTOMATIC_REASON,
          }),
        }),
        outcome: 'success',
      }),
    ]);
  });

  it('records every entity that claims the StatefulSet, which each reader of the job must be allowed to read', async () => {
    entities.push(
      optedIn('ledger', '3d', {
        'backstage.io/kubernetes-id': undefined,
        'backstage.io/kubernetes-label-selector':
          'backstage.io/kubernetes-id=orders',
      }),
    );
    const { jobs } = setUp();
    const pvcs = createClaims(['data-orders-db-1']);

    const job = await startOrders(jobs, pvcs);

    expect(job.claimants).toEqual([
      'component:default/ledger',
      'component:default/orders',
    ]);
    expect((await store.getJob(job.id))?.claimants).toEqual(job.claimants);
    await ended(job);
  });

  it('lifts its deleting mark from a claim it did not delete after all, so that it can be kept again', async () => {
    const { jobs, keeps } = setUp();
    const [kept, deleted] = createClaims([
      'data-orders-db-1',
      'data-orders-db-2',
    ]);
    // Annotated as kept right after its last check: its delete is refused.
    keeps.beforeFence = (call, uid) => {
      if (call === 'keptNow' && uid === kept.uid)
        annotateKept(sim, 'data-orders-db-1');
    };

    const job = await ended(await startOrders(jobs, [kept, deleted]));

    expect(job.summary.skipped.map(c => c.name)).toEqual(['data-orders-db-1']);
    await eventually('the mark is lifted', () => !keeps.marks.has(kept.uid));
    expect(keeps.keep(kept.uid)).toBe('kept');
    expect(keeps.keep(deleted.uid)).toBe('refused');
  });

  it('asks for a snapshot of every claim whenever snapshots are enabled', async () => {
    const { jobs } = setUp({ snapshotsEnabled: true });
    const pvcs = createClaims(['data-orders-db-1']);

    const job = await ended(await startOrders(jobs, pvcs, { snapshot: false }));

    expect(
      (await store.listEvents(job.id)).filter(
        e => e.type === 'snapshot-skipped',
      ),
    ).toEqual([
      expect.objectContaining({
        message:
          'No snapshot of data-orders-db-1: it is not bound to a volume, so it holds no data to snapshot',
      }),
    ]);
  });

  describe('refuses, deleting and storing nothing, when', () => {
    const refusals: Array<{
      what: string;
      arrange?: () => void;
      options?: Parameters<typeof automaticJobs>[0];
      reason: RegExp;
    }> = [
      {
        what: 'a co-claimant has not opted in',
        arrange: () => {
          entities.push(
            componentEntity('ledger', {
              annotations: {
                'backstage.io/kubernetes-label-selector':
                  'backstage.io/kubernetes-id=orders',
              },
            }),
          );
        },
        reason:
          /it is also claimed by component:default\/ledger, which has not opted in/,
      },
      {
        what: 'only label selectors claim it',
        arrange: () => {
          entities = [
            optedIn('orders', '7d', {
              'backstage.io/kubernetes-id': undefined,
              'backstage.io/kubernetes-label-selector':
                'backstage.io/kubernetes-id in (orders)',
            }),
          ];
        },
        reason: /only label selectors claim it/,
      },
      {
        what: 'the entity no longer claims it in a fresh catalog read (nothing does)',
        arrange: () => {
          entities = [];
        },
        reason: /component:default\/orders does not claim it/,
      },
      {
        what: 'the entity is no longer opted in',
        arrange: () => {
          entities = [componentEntity('orders')];
        },
        reason: /component:default\/orders is no longer opted in/,
      },
      {
        what: 'its cluster is not among those allowed',
        options: { autoPrune: { ...autoPrune, clusters: new Set(['prod']) } },
        reason: /cluster "demo" is not among those/,
      },
      {
        what: 'its namespace is not among those allowed',
        options: { autoPrune: { ...autoPrune, namespaces: new Set(['db']) } },
        reason: /namespace "shop" is not among those/,
      },
      {
        what: 'the namespace binding does not name the owner',
        options: { namespaceOwnerAnnotation: 'example.com/owners' },
        reason:
          /Namespace shop names no owner in its example.com\/owners annotation/,
      },
    ];

    it.each(refusals)('$what', async ({ arrange, options, reason }) => {
      const { jobs, audits } = setUp(options);
      const pvcs = createClaims(['data-orders-db-1']);
      arrange?.();

      const error = await startOrders(jobs, pvcs).catch(e => e);

      expect(error.name).toBe('NotAllowedError');
      expect(error.message).toMatch(reason);
      expect(exists('data-orders-db-1')).toBe(true);
      expect((await store.listJobs()).items).toEqual([]);
      expect(audits[0]).toMatchObject({ outcome: 'fail' });
    });

    it('asked for the claims a deleted StatefulSet left (400)', async () => {
      const { jobs } = setUp();
      const pvcs = createClaims(['data-orders-db-1']);

      const error = await startOrders(jobs, pvcs, {
        leftBy: { evidence: 'lineage' },
      }).catch(e => e);

      expect(error.name).toBe('InputError');
      expect(exists('data-orders-db-1')).toBe(true);
    });

    it('given a run id that is no id', async () => {
      const { jobs, audits } = setUp();
      const pvcs = createClaims(['data-orders-db-1']);

      const error = await jobs
        .start({
          request: {
            cluster: 'demo',
            namespace: 'shop',
            statefulSet: 'orders-db',
            pvcs,
          },
          onBehalfOf: orders(),
          runId: 'x'.repeat(65),
        })
        .catch(e => e);

      expect(error.name).toBe('InputError');
      expect(audits).toEqual([]);
      expect((await store.listJobs()).items).toEqual([]);
    });
  });

  it('stops before its delete when a co-claimant withdraws its opt-in while the job runs', async () => {
    // ledger claims orders-db too, by its team label, and has opted in.
    const ledger = (annotations: Record<string, string>) =>
      componentEntity('ledger', {
        annotations: {
          'backstage.io/kubernetes-label-selector': 'team=ledger',
          ...annotations,
        },
      });
    entities.push(ledger({ [AUTO_PRUNE_ANNOTATION]: '3d' }));
    const sts = sim.store.require('apps/statefulsets', 'shop', 'orders-db');
    sim.store.update('apps/statefulsets', {
      ...sts,
      metadata: {
        ...sts.metadata,
        labels: { ...sts.metadata.labels, team: 'ledger' },
      },
    } as KubeObject);
    const { jobs } = setUp();
    const pvcs = createClaims(['data-orders-db-1']);
    midJob = () => {
      entities[1] = ledger({});
    };

    const job = await ended(await startOrders(jobs, pvcs));

    expect(exists('data-orders-db-1')).toBe(true);
    expect(job.status).toBe('aborted');
    expect(job.reason).toBe(
      `automatic pruning may no longer act on StatefulSet shop/orders-db: it is also claimed by component:default/ledger, which has not opted in (${AUTO_PRUNE_ANNOTATION}); every entity that claims a StatefulSet must opt in`,
    );
    expect(reads).toBeGreaterThan(2);
  });
});
