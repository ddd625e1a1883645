/**
 * npm run bench:backend — the pvc-pruner backend against kube-sim, in one run.
 * Prints figures; it is not a test. Targets (README): scan ≤ 1.2× the raw API
 * calls it needs, prune ≤ 1.5× `kubectl delete --wait`, first SSE event
 * ≤ 100 ms after the POST, heap growth < 200 MB scanning 50,000 claims.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createBackend } from '@backstage/backend-defaults';
import { mockServices } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { Agent, request } from 'undici';
import { KubeObject, KubeSim, startKubeSim } from 'kube-sim';

const run = promisify(execFile);
const PORT = 7099;
const BASE = `http://127.0.0.1:${PORT}/api/pvc-pruner`;
const dispatcher = new Agent({ connections: 32 });
let simDispatcher: Agent;

const ms = (n: number) => `${n.toFixed(0)} ms`;
const median = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A namespace of `sets` StatefulSets with `perSet` claims each, `orphansPerSet` of them above the replica count. */
function seedNamespace(
  sim: KubeSim,
  namespace: string,
  id: string,
  sets: number,
  perSet: number,
  orphansPerSet: number,
) {
  const { store } = sim;
  store.create('namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace },
  } as KubeObject);
  for (let s = 0; s < sets; s++) {
    const name = `db-${s}`;
    const labels = { app: name, 'backstage.io/kubernetes-id': id };
    const replicas = perSet - orphansPerSet;
    store.create('apps/statefulsets', {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name, namespace, labels },
      spec: {
        replicas,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: 'db', image: 'db:1' }] },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: {
              accessModes: ['ReadWriteOnce'],
              resources: { requests: { storage: '1Gi' } },
            },
          },
        ],
      },
    } as unknown as KubeObject);
    for (let i = 0; i < perSet; i++) {
      const claim = `data-${name}-${i}`;
      const volume = `pv-${namespace}-${claim}`;
      const created = store.create('persistentvolumeclaims', {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: claim, namespace, labels },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
          volumeName: volume,
          storageClassName: '',
        },
        status: { phase: 'Bound', capacity: { storage: '1Gi' } },
      } as unknown as KubeObject);
      store.create('persistentvolumes', {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: {
          name: volume,
          annotations: { 'pv.kubernetes.io/provisioned-by': 'sim.csi.k8s.io' },
        },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Delete',
          claimRef: {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            namespace,
            name: claim,
            uid: created.metadata.uid,
          },
          csi: { driver: 'sim.csi.k8s.io', volumeHandle: volume },
        },
        status: { phase: 'Bound' },
      } as unknown as KubeObject);
      if (i < replicas) {
        store.create('pods', {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `${name}-${i}`, namespace, labels },
          spec: {
            nodeName: 'sim-node-1',
            containers: [{ name: 'db', image: 'db:1' }],
            volumes: [
              { name: 'data', persistentVolumeClaim: { claimName: claim } },
            ],
          },
        } as unknown as KubeObject);
      }
    }
  }
}

/** Waits until the simulator's controllers have nothing left to do with the seeded objects. */
async function settled(sim: KubeSim) {
  const started = performance.now();
  while (!sim.controllersIdle()) {
    if (performance.now() - started > 120000)
      throw new Error('the simulator did not settle in 2 minutes');
    await new Promise(resolve => setTimeout(resolve, 50));
  }
}

async function startBackend(
  sim: KubeSim,
  entities: Array<{ name: string; id: string }>,
) {
  const backend = createBackend();
  backend.add(
    mockServices.rootConfig.factory({
      data: {
        backend: {
          baseUrl: `http://127.0.0.1:${PORT}`,
          listen: { port: PORT, host: '127.0.0.1' },
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
                  caData: Buffer.from(sim.caCert!).toString('base64'),
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

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await request(url, {
    headers: { accept: 'application/json', ...headers },
    dispatcher: url.startsWith('https:') ? simDispatcher : dispatcher,
  });
  const body = (await res.body.json()) as any;
  if (res.statusCode !== 200)
    throw new Error(`${url}: ${res.statusCode} ${JSON.stringify(body)}`);
  return body;
}

/** The API calls a scan needs, made directly: the baseline the backend is compared with. */
async function rawScan(sim: KubeSim, namespace: string, selector: string) {
  const headers = { authorization: `Bearer ${sim.token}` };
  const api = (path: string) => get(`${sim.url}${path}`, headers);
  const listAll = async (path: string) => {
    const items: any[] = [];
    let cont = '';
    do {
      const page = await api(
        `${path}${path.includes('?') ? '&' : '?'}limit=500${
          cont ? `&continue=${encodeURIComponent(cont)}` : ''
        }`,
      );
      items.push(...page.items);
      cont = page.metadata.continue ?? '';
    } while (cont);
    return items;
  };
  const sets = await listAll(
    `/apis/apps/v1/namespaces/${namespace}/statefulsets?labelSelector=${encodeURIComponent(
      selector,
    )}`,
  );
  const [claims, pods] = await Promise.all([
    listAll(`/api/v1/namespaces/${namespace}/persistentvolumeclaims`),
    listAll(`/api/v1/namespaces/${namespace}/pods`),
  ]);
  const used = new Set(
    pods.flatMap((p: any) =>
      (p.spec.volumes ?? []).map(
        (v: any) => v.persistentVolumeClaim?.claimName,
      ),
    ),
  );
  const replicas = new Map(
    sets.map((s: any) => [s.metadata.name, s.spec.replicas]),
  );
  const orphanVolumes = claims
    .filter((c: any) => {
      const m = c.metadata.name.match(/^data-(db-\d+)-(\d+)$/);
      return (
        m &&
        replicas.has(m[1]) &&
        Number(m[2]) >= (replicas.get(m[1]) as number) &&
        !used.has(c.metadata.name)
      );
    })
    .map((c: any) => c.spec.volumeName);
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < orphanVolumes.length)
        await api(`/api/v1/persistentvolumes/${orphanVolumes[next++]}`);
    }),
  );
  return orphanVolumes.length;
}

async function benchScan(sim: KubeSim) {
  const selector = 'backstage.io/kubernetes-id=scan';
  const backendTimes: number[] = [];
  const rawTimes: number[] = [];
  let orphans = 0;
  for (let round = 0; round < 7; round++) {
    let t = performance.now();
    orphans = (await get(`${BASE}/v1/orphans?entityRef=component:default/scan`))
      .totals.orphans;
    backendTimes.push(performance.now() - t);
    t = performance.now();
    await rawScan(sim, 'scan', selector);
    rawTimes.push(performance.now() - t);
  }
  sim.clearRequests();
  await get(`${BASE}/v1/orphans?entityRef=component:default/scan`);
  const log = sim.requests();
  const perPath = (re: RegExp) => log.filter(r => re.test(r.path)).length;
  const b = median(backendTimes.slice(2));
  const r = median(rawTimes.slice(2));
  console.log(
    `scan: 10,000 claims / 100 StatefulSets / ${orphans} orphans: backend ${ms(
      b,
    )}, raw API calls ${ms(r)}, ratio ${(b / r).toFixed(2)} (target ≤ 1.2)`,
  );
  console.log(
    `scan requests: ${log.length} in all; ${perPath(
      /statefulsets$/,
    )} statefulset lists, ${perPath(
      /persistentvolumeclaims$/,
    )} claim list pages, ${perPath(/pods$/)} pod list pages, ${perPath(
      /persistentvolumes\//,
    )} volume GETs (one per orphan), ${perPath(
      /persistentvolumeclaims\//,
    )} claim GETs`,
  );
}

async function benchPrune(sim: KubeSim) {
  const scan = await get(
    `${BASE}/v1/orphans?entityRef=component:default/prune`,
  );
  const [a, b] = scan.clusters[0].statefulSets;
  const started = performance.now();
  const post = await request(`${BASE}/v1/prune-jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      entityRef: 'component:default/prune',
      cluster: 'bench',
      namespace: 'prune',
      statefulSet: a.name,
      pvcs: a.orphans.map((o: any) => ({ name: o.name, uid: o.uid })),
    }),
    dispatcher,
  });
  const { id } = (await post.body.json()) as { id: string };
  const firstEvent = await firstSseEvent(id, started);
  let job;
  do {
    await new Promise(resolve => setTimeout(resolve, 20));
    job = await get(`${BASE}/v1/prune-jobs/${id}`);
  } while (['queued', 'running'].includes(job.status));
  const jobMs = Date.parse(job.finishedAt) - Date.parse(job.createdAt);
  if (process.env.BENCH_DEBUG) {
    const res = await request(`${BASE}/v1/prune-jobs/${id}/events`, {
      dispatcher,
    });
    const frames = (await res.body.text())
      .split('\n')
      .filter(l => l.startsWith('data: '))
      .map(l => JSON.parse(l.slice(6)));
    let prev = Date.parse(frames[0].at);
    for (const f of frames.slice(0, 30)) {
      console.log(
        `${String(Date.parse(f.at) - prev).padStart(6)} ms ${f.type} ${
          f.pvc ?? ''
        }`,
      );
      prev = Date.parse(f.at);
    }
  }

  const dir = mkdtempSync(join(tmpdir(), 'bench-kubectl-'));
  writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
  const kubectl = (args: string[]) =>
    run('kubectl', [
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '--cache-dir',
      join(dir, 'cache'),
      ...args,
    ]);
  await kubectl(['get', 'ns']); // warm the discovery cache, as a user's kubectl would have it
  const t = performance.now();
  await kubectl([
    'delete',
    'pvc',
    '-n',
    'prune',
    '--wait',
    ...b.orphans.map((o: any) => o.name),
  ]);
  const kubectlMs = performance.now() - t;
  console.log(
    `prune: ${job.summary.deleted.length} orphans ${job.status}: job ${ms(
      jobMs,
    )} (claims and volumes followed), kubectl delete --wait ${ms(
      kubectlMs,
    )}, ratio ${(jobMs / kubectlMs).toFixed(2)} (target ≤ 1.5)`,
  );
  console.log(
    `first SSE event: ${ms(
      firstEvent,
    )} after the POST was sent, through the backend's compression (target ≤ 100 ms)`,
  );
}

/** Milliseconds from `since` until the first frame of the job's event stream is read. */
async function firstSseEvent(id: string, since: number): Promise<number> {
  const res = await request(`${BASE}/v1/prune-jobs/${id}/events`, {
    headers: { accept: 'text/event-stream', 'accept-encoding': 'gzip' },
    dispatcher,
  });
  for await (const chunk of res.body) {
    if (String(chunk).includes('event: ')) {
      const elapsed = performance.now() - since;
      res.body.destroy();
      return elapsed;
    }
  }
  throw new Error('the stream ended without an event');
}

async function benchMemory() {
  global.gc?.();
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 5);
  const t = performance.now();
  const result = await get(
    `${BASE}/v1/orphans?entityRef=component:default/big`,
  );
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  console.log(
    `memory: scanning a 50,000-claim namespace (${
      result.totals.orphans
    } orphans) took ${ms(performance.now() - t)}; heap growth ${(
      (peak - before) /
      2 ** 20
    ).toFixed(
      0,
    )} MB at peak (target < 200 MB; the simulator runs in the same process and its serialization counts too)`,
  );
}

async function main() {
  const only = new Set(process.argv.slice(2));
  const wanted = (section: string) => only.size === 0 || only.has(section);
  const sim = await startKubeSim({
    https: true,
    timeFactor: 0.01,
    historyLimit: 300000,
  });
  simDispatcher = new Agent({ connections: 32, connect: { ca: sim.caCert } });
  if (wanted('scan')) seedNamespace(sim, 'scan', 'scan', 100, 100, 5);
  if (wanted('prune')) seedNamespace(sim, 'prune', 'prune', 2, 100, 100);
  await settled(sim);
  const backend = await startBackend(sim, [
    { name: 'scan', id: 'scan' },
    { name: 'prune', id: 'prune' },
    { name: 'big', id: 'big' },
  ]);
  try {
    if (wanted('scan')) await benchScan(sim);
    if (wanted('prune')) await benchPrune(sim);
    if (wanted('memory')) {
      // A read-only scan needs no controllers; paused, they leave the seeded objects as they are.
      sim.pauseControllers();
      seedNamespace(sim, 'big', 'big', 500, 100, 2);
      await benchMemory();
    }
  } finally {
    await backend.stop();
    await sim.close();
    await dispatcher.close();
    await simDispatcher.close();
  }
}

main().catch(e => {
  console.error(e);
  process.exit(1);
});
