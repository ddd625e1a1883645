/**
 * The automatic run's planner for `npm run bench:fleet -- autoprune`, in its own process
 * (as the backend would run it): the plugin's own services (catalog read, watch cache,
 * orphan finder with first sightings, prices and lineage, SQLite) built as plugin.ts builds
 * them, around the one cluster and catalog the parent gives (its `setup` message). Answers each
 * `plan` with the time the run's planning took (`AnnouncingPlanner.plan()`: the planner, then
 * the announcements written to the database), the planner's share of it, and what the planner
 * planned. Card keeps come from a store that holds none: the figure is the planning, not the
 * keep store's query.
 */
import { DatabaseManager } from '@backstage/backend-defaults/database';
import type {
  LifecycleService,
  LoggerService,
} from '@backstage/backend-plugin-api';
import { mockServices } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { componentOf, type BackendSetup } from './backendSetup';
/* eslint-disable @backstage/no-relative-monorepo-imports -- the figure times a service of the backend that its package does not export */
import {
  AnnouncementStore,
  AnnouncingPlanner,
  AutoPrunePlanner,
  readAutoPruneOptions,
  type AutoPrunePlan,
} from '../../plugins/pvc-pruner-backend/src/automation';
import { PriceList } from '../../plugins/pvc-pruner-backend/src/cost';
import {
  ClaimLineageStore,
  LineageRecorder,
} from '../../plugins/pvc-pruner-backend/src/lineage';
import { OrphanSightingStore } from '../../plugins/pvc-pruner-backend/src/database';
import {
  ClusterAuth,
  ClusterCaches,
  ClusterRegistry,
  KubeGateways,
} from '../../plugins/pvc-pruner-backend/src/kubernetes';
import {
  OrphanAnnotator,
  OrphanFinder,
} from '../../plugins/pvc-pruner-backend/src/orphans';
import { WATCH_CACHE_TRIMMERS } from '../../plugins/pvc-pruner-backend/src/orphans/orphanRule';
import { WorkloadCatalog } from '../../plugins/pvc-pruner-backend/src/ownership';

/** Messages the parent sends, `setup` first (a catalog too large for the environment); each gets exactly one reply. */
export type PlannerRequest =
  | { type: 'setup'; setup: PlannerSetup }
  | { type: 'plan' };

/** What one plan took and found (the counts are the planner's, before the announcements hold any back). */
export interface PlanFigures {
  /** The run's planning: the planner and the announcements. */
  ms: number;
  /** The planner's share of `ms`. */
  plannerMs: number;
  /** Claims the plan holds, eligible or upcoming, once announced (every one the planner planned). */
  announced: number;
  considered: number;
  groups: number;
  eligible: number;
  upcoming: number;
  kept: number;
  /** Distinct claimants of the planned StatefulSets. */
  entities: number;
  clustersFailed: string[];
}

/** What the planner runs with: the setup's one cluster and catalog, and `pvcPruner.autoPrune`. */
export interface PlannerSetup extends BackendSetup {
  autoPrune: Record<string, string | boolean | number>;
}

const quiet: LoggerService = {
  error: (message: string) => process.stderr.write(`${message}\n`),
  warn: () => {},
  info: () => {},
  debug: () => {},
  child: () => quiet,
};

const noLifecycle: LifecycleService = {
  addStartupHook: () => {},
  addShutdownHook: () => {},
  addBeforeShutdownHook: () => {},
} as unknown as LifecycleService;

async function plannerOf(setup: PlannerSetup) {
  const database = DatabaseManager.fromConfig(
    mockServices.rootConfig({
      data: {
        backend: {
          database: { client: 'better-sqlite3', connection: ':memory:' },
        },
      },
    }),
  ).forPlugin('pvc-pruner', { logger: quiet, lifecycle: noLifecycle });
  const [cluster] = setup.clusters;
  const gateways = new KubeGateways(
    ClusterRegistry.of(
      [
        {
          name: cluster.name,
          url: cluster.url,
          caData: cluster.caData,
          authMetadata: {
            'kubernetes.io/auth-provider': 'serviceAccount',
            serviceAccountToken: cluster.serviceAccountToken,
          },
        },
      ],
      quiet,
    ),
    ClusterAuth.create({ config: mockServices.rootConfig(), logger: quiet }),
    60000,
  );
  const caches = new ClusterCaches({
    trim: WATCH_CACHE_TRIMMERS,
    logger: quiet,
    syncWaitMs: 60000,
  });
  const sightings = await OrphanSightingStore.create({ database });
  const workloads = new WorkloadCatalog({
    catalog: catalogServiceMock({
      entities: setup.entities.map(componentOf),
    }),
    auth: mockServices.auth(),
    logger: quiet,
  });
  const finder = new OrphanFinder(
    gateways,
    caches,
    new OrphanAnnotator(
      sightings,
      PriceList.of({ currency: 'USD', defaultPricePerGiBMonth: 0.1 }),
    ),
    { pausedStatefulSets: 'keep' },
    undefined,
    new LineageRecorder({
      store: await ClaimLineageStore.create({ database }),
      workloads,
      logger: quiet,
    }),
  );
  const options = readAutoPruneOptions(
    mockServices.rootConfig({ data: { autoPrune: setup.autoPrune } }),
  );
  const planner = new AutoPrunePlanner({
    catalog: workloads,
    finder,
    databaseNow: sightings.now,
    firstSightings: uids => sightings.firstSeenInDatabase(uids),
    keeps: { keepsOf: async () => new Map() },
    options,
  });
  let inner: { plan: AutoPrunePlan; ms: number } | undefined;
  const announcing = new AnnouncingPlanner({
    planning: {
      plan: async () => {
        const started = performance.now();
        const plan = await planner.plan();
        inner = { plan, ms: performance.now() - started };
        return plan;
      },
    },
    announcements: await AnnouncementStore.create({ database }),
    notifyBeforeMs: options.notifyBeforeMs,
  });
  return { announcing, planned: () => inner! };
}

async function main() {
  let planner: Awaited<ReturnType<typeof plannerOf>> | undefined;
  process.on('message', async (msg: PlannerRequest) => {
    if (msg.type === 'setup') {
      planner = await plannerOf(msg.setup);
      process.send!({});
      return;
    }
    const started = performance.now();
    const held = await planner!.announcing.plan();
    const ms = performance.now() - started;
    const { plan, ms: plannerMs } = planner!.planned();
    process.send!({
      ms,
      plannerMs,
      announced: held.groups.reduce(
        (n, g) => n + g.eligible.length + g.upcoming.length,
        0,
      ),
      considered: plan.considered,
      groups: plan.groups.length,
      eligible: plan.groups.reduce((n, g) => n + g.eligible.length, 0),
      upcoming: plan.groups.reduce((n, g) => n + g.upcoming.length, 0),
      kept: plan.groups.reduce((n, g) => n + g.kept.length, 0),
      entities: new Set(plan.groups.flatMap(g => g.claimants)).size,
      clustersFailed: plan.clustersFailed.map(f => `${f.cluster}: ${f.error}`),
    } satisfies PlanFigures);
  });
  process.send!({});
}

main().catch(e => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
