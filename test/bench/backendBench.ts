/**
 * npm run bench:backend — the pvc-pruner backend against kube-sim, in one run.
 * Prints figures; it is not a test. Targets (README): scan ≤ 1.2× the raw API
 * calls it needs, prune ≤ 1.5× `kubectl delete --wait`, first SSE event
 * ≤ 100 ms after the POST, heap growth < 200 MB scanning 50,000 claims.
 * The simulator and the backend each run in their own process; this one is
 * the client, and makes the raw API calls the scan is compared with.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { ForkedScript, forkScript } from 'kube-sim/bench/forkScript';
import type { SimReady, SimRequest } from './simProcess';
import type { BackendRequest, HeapGrowth } from './backendProcess';
import { getJson, median, ms, SCAN_NAMESPACE } from './figures';

const run = promisify(execFile);
const BACKEND_PORT = 7099;
const BASE = `http://127.0.0.1:${BACKEND_PORT}/api/pvc-pruner`;
const dispatcher = new Agent({ connections: 32 });
const SCAN_ROUNDS = 41;
const SCAN_WARMUP_ROUNDS = 5;
let simDispatcher: Agent;

type BenchSim = ForkedScript<SimReady, SimRequest>;

function get(url: string, headers: Record<string, string> = {}) {
  return getJson(
    url,
    url.startsWith('https:') ? simDispatcher : dispatcher,
    headers,
  );
}

/** The API calls a scan needs, made directly: the baseline the backend is compared with. */
async function rawScan(sim: BenchSim, namespace: string, selector: string) {
  const headers = { authorization: `Bearer ${sim.ready.token}` };
  const api = (path: string) => get(`${sim.ready.url}${path}`, headers);
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

async function benchScan(sim: BenchSim) {
  const selector = 'backstage.io/kubernetes-id=scan';
  const backendTimes: number[] = [];
  const rawTimes: number[] = [];
  let orphans = 0;
  const timeBackend = async () => {
    const t = performance.now();
    const scan = await get(
      `${BASE}/v1/orphans?entityRef=component:default/scan`,
    );
    backendTimes.push(performance.now() - t);
    orphans = scan.totals.orphans;
  };
  const timeRaw = async () => {
    const t = performance.now();
    await rawScan(sim, 'scan', selector);
    rawTimes.push(performance.now() - t);
  };
  // Alternating which goes first, so neither always runs on the other's garbage.
  for (let round = 0; round < SCAN_ROUNDS; round++) {
    if (round % 2) {
      await timeRaw();
      await timeBackend();
    } else {
      await timeBackend();
      await timeRaw();
    }
  }
  await sim.ask({ type: 'clearRequests' });
  const answer = await request(
    `${BASE}/v1/orphans?entityRef=component:default/scan`,
    { dispatcher },
  );
  const answerBytes = Buffer.byteLength(await answer.body.text());
  const { paths: log } = await sim.ask<{ paths: string[] }>({
    type: 'requestPaths',
  });
  const perPath = (re: RegExp) => log.filter(path => re.test(path)).length;
  // The first rounds warm up the JIT and connections on both sides.
  const b = median(backendTimes.slice(SCAN_WARMUP_ROUNDS));
  const r = median(rawTimes.slice(SCAN_WARMUP_ROUNDS));
  const ratios = backendTimes
    .slice(SCAN_WARMUP_ROUNDS)
    .map((t, i) => t / rawTimes[SCAN_WARMUP_ROUNDS + i])
    .sort((x, y) => x - y);
  console.log(
    `scan: 10,000 claims / 100 StatefulSets / ${orphans} orphans: backend ${ms(
      b,
    )}, raw API calls ${ms(r)} (medians of ${ratios.length} rounds), ratio ${(
      b / r
    ).toFixed(2)} (target ≤ 1.2; per-round ratios ${ratios[0].toFixed(
      2,
    )}–${ratios[ratios.length - 1].toFixed(2)})`,
  );
  console.log(
    `scan answer: ${(answerBytes / 1e6).toFixed(2)} MB of JSON, uncompressed`,
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

/** POSTs a prune of every orphan of the StatefulSet; resolves with the job id. */
async function startPrune(sts: any, dryRun: boolean): Promise<string> {
  const post = await request(`${BASE}/v1/prune-jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      entityRef: 'component:default/prune',
      cluster: 'bench',
      namespace: 'prune',
      statefulSet: sts.name,
      pvcs: sts.orphans.map((o: any) => ({ name: o.name, uid: o.uid })),
      dryRun,
    }),
    dispatcher,
  });
  const body = (await post.body.json()) as { id: string };
  if (post.statusCode !== 202)
    throw new Error(
      `prune answered ${post.statusCode} ${JSON.stringify(body)}`,
    );
  return body.id;
}

async function finished(id: string) {
  let job;
  do {
    await new Promise(resolve => setTimeout(resolve, 20));
    job = await get(`${BASE}/v1/prune-jobs/${id}`);
  } while (['queued', 'running'].includes(job.status));
  return job;
}

async function benchPrune(sim: BenchSim) {
  const scan = await get(
    `${BASE}/v1/orphans?entityRef=component:default/prune`,
  );
  const [a, b] = scan.clusters[0].statefulSets;
  // Dry runs of the other StatefulSet first: the first SSE event of each, on a warm backend.
  const dryRunFirstEvents: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    const dryRun = await startPrune(b, true);
    dryRunFirstEvents.push(await firstSseEvent(dryRun, started));
    await finished(dryRun);
  }
  const started = performance.now();
  const id = await startPrune(a, false);
  const firstEvent = await firstSseEvent(id, started);
  const job = await finished(id);
  const jobMs = Date.parse(job.finishedAt) - Date.parse(job.createdAt);
  const dir = mkdtempSync(join(tmpdir(), 'bench-kubectl-'));
  writeFileSync(join(dir, 'kubeconfig'), sim.ready.kubeconfig);
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
    `first SSE event after the POST was sent, through the backend's compression (target ≤ 100 ms): the prune ${ms(
      firstEvent,
    )}; five dry runs before it median ${ms(
      median(dryRunFirstEvents),
    )}, max ${ms(Math.max(...dryRunFirstEvents))}`,
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

/**
 * Heap growth of the backend's process while it answers a scan of a
 * 50,000-claim namespace, sampled there every 5 ms.
 */
async function benchMemory(backend: ForkedScript<unknown, BackendRequest>) {
  await backend.ask({ type: 'startHeapWatch' });
  const t = performance.now();
  const result = await get(
    `${BASE}/v1/orphans?entityRef=component:default/big`,
  );
  const elapsed = performance.now() - t;
  const { peakGrowthBytes } = await backend.ask<HeapGrowth>({
    type: 'stopHeapWatch',
  });
  console.log(
    `memory: scanning a 50,000-claim namespace (${
      result.totals.orphans
    } orphans) took ${ms(elapsed)}; the backend's heap grew ${(
      peakGrowthBytes /
      2 ** 20
    ).toFixed(
      0,
    )} MB at peak (target < 200 MB; backend, simulator and client each run in their own process)`,
  );
}

async function main() {
  const only = new Set(process.argv.slice(2));
  const wanted = (section: string) => only.size === 0 || only.has(section);
  const sim = await forkScript<SimReady, SimRequest>(
    join(__dirname, 'simProcess.ts'),
  );
  simDispatcher = new Agent({
    connections: 32,
    connect: { ca: sim.ready.caCert },
  });
  const backend = await forkScript<unknown, BackendRequest>(
    join(__dirname, 'backendProcess.ts'),
    {
      ...process.env,
      BENCH_SIM: JSON.stringify(sim.ready),
      BENCH_BACKEND_PORT: String(BACKEND_PORT),
      LOG_LEVEL: 'warn',
    },
  );
  try {
    if (wanted('prune')) {
      await sim.ask({
        type: 'seed',
        namespace: 'prune',
        id: 'prune',
        sets: 2,
        perSet: 100,
        orphansPerSet: 100,
      });
      await sim.ask({ type: 'settle' });
      await benchPrune(sim);
    }
    // Scans only read: with the controllers paused, the seeded objects stay as they are.
    await sim.ask({ type: 'pauseControllers' });
    if (wanted('scan')) {
      await sim.ask(SCAN_NAMESPACE);
      await benchScan(sim);
    }
    if (wanted('memory')) {
      await sim.ask({
        type: 'seed',
        namespace: 'big',
        id: 'big',
        sets: 500,
        perSet: 100,
        orphansPerSet: 2,
      });
      await benchMemory(backend);
    }
  } finally {
    backend.kill();
    sim.kill();
    await dispatcher.close();
    await simDispatcher.close();
  }
}

main().catch(e => {
  console.error(e);
  process.exitCode = 1;
});
