/**
 * The pvc-pruner backend for `npm run bench:backend` and `bench:fleet`, in its own process so
 * that its heap is its own and the benchmark's client does not share its CPU.
 * Reports heap growth while the parent scans.
 */
import { createBackend } from '@backstage/backend-defaults';
import { mockServices } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import type { SimReady } from './simProcess';

const BACKEND_PORT = Number(process.env.BENCH_BACKEND_PORT);

/** Messages the parent sends; each gets exactly one reply. */
export type BackendRequest =
  | { type: 'startHeapWatch' }
  | { type: 'stopHeapWatch' }
  | { type: 'memory' };

/** The process's memory after a full garbage collection. */
export interface MemoryUse {
  heapUsedBytes: number;
  rssBytes: number;
}

export interface HeapGrowth {
  peakGrowthBytes: number;
}

async function startBackend(
  sim: SimReady,
  entities: Array<{ name: string; id: string }>,
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
          clusterLocatorMethods: [
            {
              type: 'config',
              clusters: [
                {
                  name: 'bench',
                  url: sim.url,
                  authProvider: 'serviceAccount',
                  serviceAccountToken: sim.token,
                  caData: Buffer.from(sim.caCert).toString('base64'),
                },
              ],
            },
          ],
        },
        pvcPruner: {
          clusterRequestTimeoutSeconds: 60,
          volumeWaitTimeoutSeconds: 60,
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
        spec: {
          type: 'service',
          owner: 'group:default/bench',
          lifecycle: 'production',
        },
      })),
    }),
  );
  backend.add(import('backstage-plugin-pvc-pruner-backend'));
  await backend.start();
  return backend;
}

async function main() {
  const sim = JSON.parse(process.env.BENCH_SIM!) as SimReady;
  await startBackend(sim, [
    { name: 'scan', id: 'scan' },
    { name: 'prune', id: 'prune' },
    { name: 'big', id: 'big' },
  ]);
  let before = 0;
  let peak = 0;
  let sampler: NodeJS.Timeout | undefined;
  const sample = () => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  };
  process.on('message', (msg: BackendRequest) => {
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
