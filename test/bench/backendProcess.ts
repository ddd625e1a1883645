/**
 * The pvc-pruner backend for `npm run bench:backend` and `bench:fleet`, in its own process so
 * that its heap is its own and the benchmark's client does not share its CPU.
 * Runs with the clusters, catalog and settings the parent gives (BENCH_BACKEND), the
 * permission framework on with an in-process policy that allows everything, and tells the
 * parent what it asked its catalog and permissions, so a figure can check the path it timed.
 * Reports heap growth while the parent scans.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { createBackend } from '@backstage/backend-defaults';
import {
  coreServices,
  createServiceFactory,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import { mockServices } from '@backstage/backend-test-utils';
import { catalogServiceRef } from '@backstage/plugin-catalog-node';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { componentOf, type BackendSetup } from './backendSetup';

const BACKEND_PORT = Number(process.env.BENCH_BACKEND_PORT);

/** Messages the parent sends; each gets exactly one reply. */
export type BackendRequest =
  | { type: 'startHeapWatch' }
  | { type: 'stopHeapWatch' }
  | { type: 'memory' }
  | { type: 'startCpuProfile' }
  | { type: 'stopCpuProfile'; path: string }
  | { type: 'counts' }
  | { type: 'clearCounts' };

/** The process's memory after a full garbage collection. */
export interface MemoryUse {
  heapUsedBytes: number;
  rssBytes: number;
}

export interface HeapGrowth {
  peakGrowthBytes: number;
}

/** One call to the permissions service: the entities it asked about, and its basic permissions. */
export interface AuthorizeCall {
  /** How many requests named an entity. */
  entities: number;
  /** The first 100 entity refs asked about. */
  entityRefs: string[];
  /** Names of the permissions asked without a resource. */
  basic: string[];
}

/** What the backend asked its catalog and permissions since the counts were last cleared. */
export interface BackendCounts {
  /** Whole-catalog reads of the entities with Kubernetes annotations, with the plugin's own credentials: the claimant lookups. */
  claimantReads: number;
  /** Milliseconds since the last such read, whenever it was (undefined before the first). */
  msSinceLastClaimantRead?: number;
  authorizeCalls: AuthorizeCall[];
}

const KUBERNETES_ANNOTATION_FILTER =
  'metadata.annotations.backstage.io/kubernetes-id';

const counts: BackendCounts = { claimantReads: 0, authorizeCalls: [] };
let lastClaimantReadAt: number | undefined;

/**
 * The in-process catalog holding the setup's entities, counting the
 * plugin's whole-catalog claimant reads (its own credentials, the
 * Kubernetes-annotations filter) as they are made.
 */
function countingCatalog(setup: BackendSetup) {
  const catalog = catalogServiceMock({
    entities: setup.entities.map(componentOf),
  });
  const getEntities = catalog.getEntities.bind(catalog);
  catalog.getEntities = async (request, options) => {
    const filters = [request?.filter ?? []].flat() as Array<
      Record<string, unknown>
    >;
    const asPlugin =
      options && 'credentials' in options
        ? (options.credentials.principal as { type?: string }).type ===
          'service'
        : false;
    if (asPlugin && filters.some(f => KUBERNETES_ANNOTATION_FILTER in f)) {
      counts.claimantReads++;
      lastClaimantReadAt = performance.now();
    }
    return getEntities(request, options);
  };
  return createServiceFactory({
    service: catalogServiceRef,
    deps: {},
    factory: () => catalog,
  });
}

/** A permission policy that allows everything, in process, recording each call's batch. */
function countingPermissions() {
  const allowAll = mockServices.permissions({ result: AuthorizeResult.ALLOW });
  const permissions: PermissionsService = {
    async authorize(requests, options) {
      const entityRefs = requests.flatMap(r =>
        'resourceRef' in r && r.resourceRef ? [r.resourceRef] : [],
      );
      if (counts.authorizeCalls.length < 100_000)
        counts.authorizeCalls.push({
          entities: entityRefs.length,
          entityRefs: entityRefs.slice(0, 100),
          basic: requests
            .filter(r => !('resourceRef' in r && r.resourceRef))
            .map(r => r.permission.name),
        });
      return allowAll.authorize(requests, options);
    },
    authorizeConditional: (requests, options) =>
      allowAll.authorizeConditional(requests, options),
  };
  return createServiceFactory({
    service: coreServices.permissions,
    deps: {},
    factory: () => permissions,
  });
}

async function startBackend(setup: BackendSetup) {
  const backend = createBackend();
  backend.add(
    mockServices.rootConfig.factory({
      data: {
        backend: {
          baseUrl: `http://127.0.0.1:${BACKEND_PORT}`,
          listen: { port: BACKEND_PORT, host: '127.0.0.1' },
          database: { client: 'better-sqlite3', connection: ':memory:' },
        },
        // The framework is on; its policy (countingPermissions) allows everything.
        permission: { enabled: true },
        kubernetes: {
          clusterLocatorMethods: [{ type: 'config', clusters: setup.clusters }],
        },
        pvcPruner: {
          clusterRequestTimeoutSeconds: 60,
          volumeWaitTimeoutSeconds: 60,
          ...setup.pvcPruner,
        },
      },
    }),
  );
  backend.add(mockServices.auth.factory());
  backend.add(mockServices.httpAuth.factory());
  backend.add(countingPermissions());
  backend.add(countingCatalog(setup));
  backend.add(import('backstage-plugin-pvc-pruner-backend'));
  await backend.start();
  return backend;
}

async function main() {
  await startBackend(JSON.parse(process.env.BENCH_BACKEND!) as BackendSetup);
  let before = 0;
  let peak = 0;
  let sampler: NodeJS.Timeout | undefined;
  const sample = () => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  };
  const profiler = new Session();
  const post = (method: string) =>
    new Promise<any>((resolve, reject) =>
      profiler.post(method, (err, result) =>
        err ? reject(err) : resolve(result),
      ),
    );
  process.on('message', async (msg: BackendRequest) => {
    if (msg.type === 'startCpuProfile') {
      profiler.connect();
      await post('Profiler.enable');
      await post('Profiler.start');
      process.send!({});
    } else if (msg.type === 'stopCpuProfile') {
      const { profile } = await post('Profiler.stop');
      profiler.disconnect();
      writeFileSync(msg.path, JSON.stringify(profile));
      process.send!({});
    }
    if (msg.type === 'startHeapWatch') {
      global.gc?.();
      before = process.memoryUsage().heapUsed;
      peak = before;
      sampler = setInterval(sample, 5);
      process.send!({});
    } else if (msg.type === 'stopHeapWatch') {
      clearInterval(sampler);
      sample();
      process.send!({ peakGrowthBytes: peak - before } satisfies HeapGrowth);
    } else if (msg.type === 'counts') {
      process.send!({
        ...counts,
        msSinceLastClaimantRead:
          lastClaimantReadAt === undefined
            ? undefined
            : performance.now() - lastClaimantReadAt,
      } satisfies BackendCounts);
    } else if (msg.type === 'clearCounts') {
      counts.claimantReads = 0;
      counts.authorizeCalls = [];
      process.send!({});
    } else if (msg.type === 'memory') {
      global.gc?.();
      const { heapUsed, rss } = process.memoryUsage();
      process.send!({
        heapUsedBytes: heapUsed,
        rssBytes: rss,
      } satisfies MemoryUse);
    }
  });
  process.send!({});
}

main().catch(e => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
