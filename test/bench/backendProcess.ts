/**
 * The pvc-pruner backend for `npm run bench:backend` and `bench:fleet`, in its own process so
 * that its heap is its own and the benchmark's client does not share its CPU.
 * Reports heap growth while the parent scans.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { createBackend } from '@backstage/backend-defaults';
import { mockServices } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import type { SimReady } from './simProcess';

const BACKEND_PORT = Number(process.env.BENCH_BACKEND_PORT);

/** Messages the parent sends; each gets exactly one reply. */
export type BackendRequest =
  | { type: 'startHeapWatch' }
  | { type: 'stopHeapWatch' }
  | { type: 'memory' }
  | { type: 'startCpuProfile' }
  | { type: 'stopCpuProfile'; path: string };

/** The process's memory after a full garbage collection. */
export interface MemoryUse {
  heapUsedBytes: number;
  rssBytes: number;
}

export interface HeapGrowth {
  peakGrowthBytes: number;
}

/** `bench:fleet`'s fleet figure: these simulators as clusters, and this many entities. */
interface FleetSetup {
  sims: SimReady[];
  entities: number;
}

const clusterOf = (name: string, sim: SimReady) => ({
  name,
  url: sim.url,
  authProvider: 'serviceAccount',
  serviceAccountToken: sim.token,
  caData: Buffer.from(sim.caCert).toString('base64'),
});

async function startBackend(
  clusters: Array<ReturnType<typeof clusterOf>>,
  entities: Array<{ name: string; id: string; owner: string }>,
  extraConfig: Record<string, unknown> = {},
) {
  const backend = createBackend();
  backend.add(
    mockServices.rootConfig.factory({
      data: {
        backend: {
          baseUrl: `http://127.0.0.1:${BACKEND_PORT}`,
          listen: { port: BACKEND_PORT, host: '127.0.0.1' },
          database: { client: 'better-sqlite3', connection: ':memory:' },
        },
        kubernetes: {
          clusterLocatorMethods: [{ type: 'config', clusters }],
        },
        pvcPruner: {
          clusterRequestTimeoutSeconds: 60,
          volumeWaitTimeoutSeconds: 60,
          // No permission backend runs here; Backstage's permissions service allows all.
          allowPruneWithoutPermissionFramework: true,
          ...extraConfig,
        },
      },
    }),
  );
  backend.add(mockServices.auth.factory());
  backend.add(mockServices.httpAuth.factory());
  backend.add(mockServices.permissions.factory());
  backend.add(
    catalogServiceMock.factory({
      entities: entities.map(e => ({
        apiVersion: 'backstage.io/v1alpha1',
        kind: 'Component',
        metadata: {
          name: e.name,
          namespace: 'default',
          annotations: { 'backstage.io/kubernetes-id': e.id },
        },
        spec: { type: 'service', owner: e.owner, lifecycle: 'production' },
      })),
    }),
  );
  backend.add(import('backstage-plugin-pvc-pruner-backend'));
  await backend.start();
  return backend;
}

async function main() {
  if (process.env.BENCH_FLEET) {
    const fleet = JSON.parse(process.env.BENCH_FLEET) as FleetSetup;
    await startBackend(
      fleet.sims.map((sim, i) => clusterOf(`cluster-${i}`, sim)),
      Array.from({ length: fleet.entities }, (_, i) => ({
        name: `svc-${i}`,
        id: `svc-${i}`,
        owner: `group:default/team-${i % 25}`,
      })),
      { pricing: { currency: 'USD', defaultPricePerGiBMonth: 0.1 } },
    );
  } else {
    const sim = JSON.parse(process.env.BENCH_SIM!) as SimReady;
    await startBackend(
      [clusterOf('bench', sim)],
      ['scan', 'prune', 'big'].map(id => ({
        name: id,
        id,
        owner: 'group:default/bench',
      })),
    );
  }
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
