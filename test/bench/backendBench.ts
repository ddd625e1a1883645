/**
 * npm run bench:backend — the pvc-pruner backend against kube-sim, in one run.
 * Prints figures; it is not a test. Targets (README): a live scan ≤ 1.2× the
 * raw API calls it needs, prune ≤ 1.5× `kubectl delete --wait`, first SSE
 * event ≤ 100 ms after the POST, heap growth < 200 MB scanning 50,000
 * claims live; a prune of 100 orphans whose snapshots are ready at once
 * ≤ 1.5× the same prune without snapshots; a scan from the watch cache is
 * measured apart.
 *
 * The live figures read a cluster of a client-side provider (OIDC: the
 * user's ID token goes with every request), which pvc-pruner never caches:
 * the path every user of such a cluster gets, and a server-side cluster's
 * first scan. The cached figure reads the same simulator as a server-side
 * cluster (the plugin's service account), last, so that its cache holds
 * nothing while the live figures run. Each figure checks that it measured
 * what it names (its counts, who made the requests, none from a cache) and
 * fails otherwise. `npm run bench:backend -- scan memory` runs some only
 * (prune, snapshot, scan, memory, cached). `BENCH_CPU_PROFILE=<folder>` writes a CPU
 * profile of the backend over the live scan's rounds there.
 *
 * The simulator and the backend each run in their own process; this one is
 * the client, and makes the raw API calls the live scan is compared with.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { ForkedScript, forkScript } from 'kube-sim/bench/forkScript';
import type {
  LoggedRequest,
  SimReady,
  SimRequest,
  SnapshotRecordAnswer,
} from './simProcess';
import type {
  BackendCounts,
  BackendRequest,
  HeapGrowth,
} from './backendProcess';
import {
  BackendSetup,
  kubernetesIdEntity,
  OIDC_TOKEN_HEADER,
  oidcCluster,
  serviceAccountCluster,
} from './backendSetup';
import {
  BenchmarkError,
  expectEqual,
  getJson,
  median,
  ms,
  percentile,
  profiled,
  SCAN_NAMESPACE,
  SCAN_ORPHANS,
} from './figures';

const run = promisify(execFile);
const BACKEND_PORT = 7099;
const BASE = `http://127.0.0.1:${BACKEND_PORT}/api/pvc-pruner`;
const dispatcher = new Agent({ connections: 32 });
const SCAN_ROUNDS = 41;
const SCAN_WARMUP_ROUNDS = 5;
const CACHED_ROUNDS = 41;
/** The client-side (OIDC) cluster every live figure reads, and the server-side one the cached figure reads. */
const LIVE = 'live';
const CACHED = 'cached';
/** The prune figure's namespace: 2 StatefulSets at 1 replica, 100 claims left behind each. */
const PRUNE_ORPHANS = 100;
/** The snapshot figure's backend (snapshots enabled), apart: enabling them changes what a scan reads. */
const SNAPSHOT_BACKEND_PORT = 7098;
const SNAPSHOT_BASE = `http://127.0.0.1:${SNAPSHOT_BACKEND_PORT}/api/pvc-pruner`;
/** The snapshot figure's namespace: 4 StatefulSets at 1 replica, 100 claims left behind each; pruned plain, with snapshots, with snapshots, plain. */
const SNAPSHOT_ORDER = [false, true, true, false];
/** The memory figure's namespace: 500 StatefulSets of 100 claims, 2 left behind each. */
const BIG_ORPHANS = 1000;
let simDispatcher: Agent;
let userHeaders: Record<string, string>;

type BenchSim = ForkedScript<SimReady, SimRequest>;
type BenchBackend = ForkedScript<unknown, BackendRequest>;

/** Connections to the simulator, trusting its CA. */
const newSimAgent = (sim: BenchSim) =>
  new Agent({ connections: 32, connect: { ca: sim.ready.caCert } });

function get(url: string, headers: Record<string, string> = {}) {
  return getJson(
    url,
    url.startsWith('https:') ? simDispatcher : dispatcher,
    headers,
  );
}

/** The orphans answer for an entity, as the card asks for it (with the user's token for the client-side cluster). */
const orphansOf = (entity: string) =>
  get(`${BASE}/v1/orphans?entityRef=component:default/${entity}`, userHeaders);

/** Requests the simulator served since the log was cleared. */
const requestLog = (sim: BenchSim) =>
  sim.ask<LoggedRequest[]>({ type: 'requestLog' });

/** The catalog: each figure's entity, pinned to the cluster it reads. */
function backendSetup(sim: SimReady): BackendSetup {
  return {
    clusters: [oidcCluster(LIVE, sim), serviceAccountCluster(CACHED, sim)],
    entities: [
      kubernetesIdEntity('scan', 'scan', { cluster: LIVE }),
      kubernetesIdEntity('prune', 'prune', { cluster: LIVE }),
      kubernetesIdEntity('big', 'big', { cluster: LIVE }),
      kubernetesIdEntity('snap', 'snap', { cluster: LIVE }),
      kubernetesIdEntity('scan-cached', 'scan', { cluster: CACHED }),
    ],
  };
}

/**
 * The API calls a scan needs, made directly with the user's token over
 * `connections`: the baseline the backend is compared with.
 */
async function rawScan(
  sim: BenchSim,
  namespace: string,
  selector: string,
  connections: Agent,
) {
  const headers = { authorization: `Bearer ${sim.ready.userToken}` };
  const api = (path: string) =>
    getJson(`${sim.ready.url}${path}`, connections, headers);
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
  // As the backend reads each namespace: its claims, pods, autoscalers and every StatefulSet (whose names a claim may also fit).
  const [claims, pods] = await Promise.all([
    listAll(`/api/v1/namespaces/${namespace}/persistentvolumeclaims`),
    listAll(`/api/v1/namespaces/${namespace}/pods`),
    listAll(
      `/apis/autoscaling/v2/namespaces/${namespace}/horizontalpodautoscalers`,
    ),
    listAll(`/apis/apps/v1/namespaces/${namespace}/statefulsets`),
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

/** Requests by kind, as the scan lines print them. */
function describeRequests(log: LoggedRequest[]) {
  const count = (pred: (r: LoggedRequest) => boolean) =>
    log.filter(pred).length;
  const lists = (resource: string) =>
    count(r => r.verb === 'list' && r.resource === resource);
  return {
    statefulSetLists: lists('statefulsets'),
    claimPages: lists('persistentvolumeclaims'),
    podPages: lists('pods'),
    autoscalerLists: lists('horizontalpodautoscalers'),
    volumeGets: count(
      r => r.verb === 'get' && r.resource === 'persistentvolumes',
    ),
    claimGets: count(
      r => r.verb === 'get' && r.resource === 'persistentvolumeclaims',
    ),
    watches: count(r => r.verb === 'watch'),
    total: log.length,
  };
}

/**
 * One live scan's requests, checked: all made with the user's token (so
 * none by a cache), the entity's StatefulSets, the namespace's claims and
 * pods in pages, its autoscalers and StatefulSets, and a GET per orphan's
 * volume; nothing else.
 */
function checkLiveScanRequests(
  sim: BenchSim,
  log: LoggedRequest[],
  orphans: number,
) {
  const byOthers = log.filter(r => r.user !== sim.ready.userName);
  if (byOthers.length > 0)
    throw new BenchmarkError(
      `the live scan's requests were not all the user's: ${
        byOthers.length
      } by others (${byOthers
        .slice(0, 3)
        .map(r => `${r.user} ${r.verb} ${r.path}`)
        .join('; ')})`,
    );
  const r = describeRequests(log);
  // The entity's, by its selector, and the namespace's, whose names a claim may also fit.
  expectEqual('StatefulSet lists in one live scan', r.statefulSetLists, 2);
  expectEqual('autoscaler lists in one live scan', r.autoscalerLists, 1);
  expectEqual(
    'volume GETs in one live scan (one per orphan)',
    r.volumeGets,
    orphans,
  );
  expectEqual('claim GETs in one live scan', r.claimGets, 0);
  expectEqual(
    'other requests in one live scan',
    r.total -
      r.statefulSetLists -
      r.claimPages -
      r.podPages -
      r.autoscalerLists -
      r.volumeGets,
    0,
  );
  return r;
}

/**
 * The live scan against the same API calls made directly. A cluster of a
 * client-side provider gets a gateway per request (the user's token lives
 * in that request only), so each backend scan opens its TLS connections
 * anew: the baseline does the same, a new undici Agent per scan. The
 * baseline over connections kept alive between scans is timed too, to show
 * what connecting costs.
 */
async function benchScan(sim: BenchSim, backend: BenchBackend) {
  const selector = 'backstage.io/kubernetes-id=scan';
  const times = {
    backend: [] as number[],
    raw: [] as number[],
    rawKeptAlive: [] as number[],
  };
  const timeBackend = async () => {
    const t = performance.now();
    const scan = await orphansOf('scan');
    times.backend.push(performance.now() - t);
    expectEqual('orphans in the live scan', scan.totals.orphans, SCAN_ORPHANS);
  };
  const timeRaw = async (keptAlive: boolean) => {
    const connections = keptAlive ? simDispatcher : newSimAgent(sim);
    const t = performance.now();
    const found = await rawScan(sim, 'scan', selector, connections);
    (keptAlive ? times.rawKeptAlive : times.raw).push(performance.now() - t);
    if (!keptAlive) await connections.close();
    expectEqual('orphans the raw API calls found', found, SCAN_ORPHANS);
  };
  const steps = [timeBackend, () => timeRaw(false), () => timeRaw(true)];
  await sim.ask({ type: 'clearRequests' });
  const profile = await profiled(backend, 'live-scan');
  // Rotating which goes first, so none always runs on another's garbage.
  for (let round = 0; round < SCAN_ROUNDS; round++)
    for (let step = 0; step < steps.length; step++)
      await steps[(round + step) % steps.length]();
  await profile.stop();
  // Both sides made the same requests, every round: nothing was answered from elsewhere.
  const rounds = describeRequests(await requestLog(sim));
  await sim.ask({ type: 'clearRequests' });
  const answer = await request(
    `${BASE}/v1/orphans?entityRef=component:default/scan`,
    { dispatcher, headers: userHeaders },
  );
  const answerBytes = Buffer.byteLength(await answer.body.text());
  const one = checkLiveScanRequests(sim, await requestLog(sim), SCAN_ORPHANS);
  expectEqual(
    `requests of ${SCAN_ROUNDS} live scans and ${2 * SCAN_ROUNDS} raw ones`,
    rounds.total,
    3 * SCAN_ROUNDS * one.total,
  );
  // The first rounds warm up the JIT on every side.
  const warm = (xs: number[]) => xs.slice(SCAN_WARMUP_ROUNDS);
  const b = median(warm(times.backend));
  const r = median(warm(times.raw));
  const ratios = warm(times.backend)
    .map((t, i) => t / warm(times.raw)[i])
    .sort((x, y) => x - y);
  console.log(
    `live scan (cluster of a client-side provider, the user's OIDC token): 10,000 claims / 100 StatefulSets / ${SCAN_ORPHANS} orphans: backend ${ms(
      b,
    )}, raw API calls ${ms(
      r,
    )} (both opening their connections per scan; medians of ${
      ratios.length
    } rounds), ratio ${(b / r).toFixed(
      2,
    )} (target ≤ 1.2; per-round ratios ${ratios[0].toFixed(2)}–${ratios[
      ratios.length - 1
    ].toFixed(
      2,
    )}); the raw calls over connections kept alive between scans ${ms(
      median(warm(times.rawKeptAlive)),
    )}`,
  );
  console.log(
    `live scan answer: ${(answerBytes / 1e6).toFixed(
      2,
    )} MB of JSON, uncompressed`,
  );
  console.log(
    `live scan requests (checked: all with the user's token): ${one.total} in all; ${one.statefulSetLists} StatefulSet lists (the entity's, the namespace's), ${one.claimPages} claim list pages, ${one.podPages} pod list pages, ${one.autoscalerLists} autoscaler list, ${one.volumeGets} volume GETs (one per orphan), ${one.claimGets} claim GETs`,
  );
}

/**
 * The same namespace's card from the watch cache of a server-side cluster:
 * the first scan starts the cache, then, once it watches every kind and
 * holds the namespace, the scans that make no request at all are timed.
 */
async function benchCachedScan(sim: BenchSim) {
  await orphansOf('scan-cached');
  const started = performance.now();
  for (;;) {
    const watches = (await requestLog(sim)).filter(
      r => r.verb === 'watch' && r.status === 200,
    ).length;
    if (
      watches >= 5 &&
      (await orphansOf('scan-cached')).totals.orphans === SCAN_ORPHANS
    )
      break;
    if (performance.now() - started > 300_000)
      throw new BenchmarkError(
        'the watch cache did not sync and hold the scan namespace in 5 minutes',
      );
    await new Promise(resolve => setTimeout(resolve, 100));
  }
  await sim.ask({ type: 'clearRequests' });
  const times: number[] = [];
  for (let round = 0; round < CACHED_ROUNDS; round++) {
    const t = performance.now();
    const scan = await orphansOf('scan-cached');
    times.push(performance.now() - t);
    expectEqual(
      'orphans in the cached scan',
      scan.totals.orphans,
      SCAN_ORPHANS,
    );
  }
  const log = await requestLog(sim);
  if (log.length > 0)
    throw new BenchmarkError(
      `the cached scans made ${log.length} API requests (${log
        .slice(0, 3)
        .map(r => `${r.verb} ${r.path}`)
        .join('; ')}): they were not all answered from the cache`,
    );
  const warm = times.slice(SCAN_WARMUP_ROUNDS);
  console.log(
    `cached scan (the same namespace from the watch cache of a server-side cluster): p50 ${median(
      warm,
    ).toFixed(1)} ms, p95 ${percentile(warm, 0.95).toFixed(1)} ms over ${
      warm.length
    } scans after ${SCAN_WARMUP_ROUNDS} warm-up ones; API requests during them: ${
      log.length
    } (checked)`,
  );
}

/** POSTs a prune of every orphan of the StatefulSet; resolves with the job id. */
async function startPrune(sts: any, dryRun: boolean): Promise<string> {
  const post = await request(`${BASE}/v1/prune-jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...userHeaders },
    body: JSON.stringify({
      entityRef: 'component:default/prune',
      cluster: LIVE,
      namespace: 'prune',
      statefulSet: sts.name,
      pvcs: sts.orphans.map((o: any) => ({ name: o.name, uid: o.uid })),
      dryRun,
    }),
    dispatcher,
  });
  const body = (await post.body.json()) as { id: string };
  if (post.statusCode !== 202)
    throw new BenchmarkError(
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

async function benchPrune(sim: BenchSim, backend: BenchBackend) {
  const scan = await orphansOf('prune');
  const [a, b] = scan.clusters[0].statefulSets;
  expectEqual('orphans of prune/db-0', a.orphans.length, PRUNE_ORPHANS);
  expectEqual('orphans of prune/db-1', b.orphans.length, PRUNE_ORPHANS);
  // Dry runs of the other StatefulSet first: the first SSE event of each, on a warm backend.
  const dryRunFirstEvents: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    const dryRun = await startPrune(b, true);
    dryRunFirstEvents.push(await firstSseEvent(dryRun, started));
    const done = await finished(dryRun);
    expectEqual(
      `claims dry run ${i + 1} would delete`,
      done.summary.deleted.length,
      PRUNE_ORPHANS,
    );
  }
  await sim.ask({ type: 'clearRequests' });
  await backend.ask({ type: 'clearCounts' });
  const started = performance.now();
  const id = await startPrune(a, false);
  const firstEvent = await firstSseEvent(id, started);
  const job = await finished(id);
  if (job.status !== 'succeeded')
    throw new BenchmarkError(
      `the prune ended ${job.status}: ${job.reason ?? ''}`,
    );
  expectEqual(
    'claims the prune deleted',
    job.summary.deleted.length,
    PRUNE_ORPHANS,
  );
  const jobMs = Date.parse(job.finishedAt) - Date.parse(job.createdAt);
  const jobRequests = (await requestLog(sim)).filter(
    r => r.user === sim.ready.userName,
  );
  const counts = await backend.ask<BackendCounts>({ type: 'counts' });
  expectEqual('catalog reads the prune job made', counts.claimantReads, 1);
  const count = (verb: string, resource: string) =>
    jobRequests.filter(r => r.verb === verb && r.resource === resource).length;
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
    `prune job's requests (POST to finish): ${count(
      'list',
      'pods',
    )} pod lists and ${count(
      'list',
      'statefulsets',
    )} StatefulSet lists for its ${PRUNE_ORPHANS} claims' re-checks, ${count(
      'get',
      'persistentvolumeclaims',
    )} claim GETs, ${count('get', 'persistentvolumes')} volume GETs, ${count(
      'delete',
      'persistentvolumeclaims',
    )} claim deletes, ${jobRequests.length} in all; ${
      counts.claimantReads
    } catalog read (checked: one per job)`,
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
  throw new BenchmarkError('the stream ended without an event');
}

/** POSTs a prune of every orphan of the StatefulSet in namespace snap to `base`, with or without snapshots; resolves with the job id. */
async function startSnapshotPrune(
  base: string,
  sts: any,
  options: { dryRun: boolean; snapshot: boolean },
): Promise<string> {
  const post = await request(`${base}/v1/prune-jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...userHeaders },
    body: JSON.stringify({
      entityRef: 'component:default/snap',
      cluster: LIVE,
      namespace: 'snap',
      statefulSet: sts.name,
      pvcs: sts.orphans.map((o: any) => ({ name: o.name, uid: o.uid })),
      ...options,
    }),
    dispatcher,
  });
  const body = (await post.body.json()) as { id: string };
  if (post.statusCode !== 202)
    throw new BenchmarkError(
      `prune answered ${post.statusCode} ${JSON.stringify(body)}`,
    );
  return body.id;
}

async function finishedOn(base: string, id: string) {
  let job;
  do {
    await new Promise(resolve => setTimeout(resolve, 20));
    job = await get(`${base}/v1/prune-jobs/${id}`);
  } while (['queued', 'running'].includes(job.status));
  return job;
}

/**
 * The undo window's cost (issue 18): the prune of 100 orphans whose
 * snapshots are ready at once, against the same prune without snapshots,
 * on one backend with snapshots enabled (its own process: enabling them
 * changes what the other figures' scans read). Four StatefulSets of 100
 * orphans, pruned plain, with snapshots, with snapshots, plain (so that
 * neither side always runs first); each job's wall time is its createdAt to
 * finishedAt. Each prune is checked against the simulator's own record:
 * 100 claim deletes, and 100 VolumeSnapshot creates (with snapshots, each
 * of a deleted claim and ready) or none.
 */
async function benchSnapshotPrune(sim: BenchSim) {
  await sim.ask({
    type: 'seed',
    namespace: 'snap',
    id: 'snap',
    sets: SNAPSHOT_ORDER.length,
    perSet: PRUNE_ORPHANS + 1,
    orphansPerSet: PRUNE_ORPHANS,
  });
  await sim.ask({ type: 'snapshotsReadyAtOnce' });
  await sim.ask({ type: 'settle' });
  const backend = await forkScript<unknown, BackendRequest>(
    join(__dirname, 'backendProcess.ts'),
    {
      ...process.env,
      BENCH_BACKEND: JSON.stringify({
        ...backendSetup(sim.ready),
        pvcPruner: { snapshots: { enabled: true, required: true } },
      }),
      BENCH_BACKEND_PORT: String(SNAPSHOT_BACKEND_PORT),
      LOG_LEVEL: 'warn',
    },
  );
  try {
    const scan = await get(
      `${SNAPSHOT_BASE}/v1/orphans?entityRef=component:default/snap`,
      userHeaders,
    );
    const sets = scan.clusters[0].statefulSets;
    expectEqual('StatefulSets of namespace snap', sets.length, 4);
    for (const sts of sets)
      expectEqual(
        `orphans of snap/${sts.name}`,
        sts.orphans.length,
        PRUNE_ORPHANS,
      );
    // Warm the backend on both paths: a dry run of each (a dry run's snapshots are dry runs too).
    for (const snapshot of [false, true]) {
      const dry = await finishedOn(
        SNAPSHOT_BASE,
        await startSnapshotPrune(SNAPSHOT_BASE, sets[0], {
          dryRun: true,
          snapshot,
        }),
      );
      expectEqual(
        `claims the warm-up dry run (snapshot ${snapshot}) would delete`,
        dry.summary.deleted.length,
        PRUNE_ORPHANS,
      );
    }
    const times: Record<'plain' | 'snapshots', number[]> = {
      plain: [],
      snapshots: [],
    };
    const profiles: Record<'plain' | 'snapshots', string[]> = {
      plain: [],
      snapshots: [],
    };
    for (const [i, snapshot] of SNAPSHOT_ORDER.entries()) {
      const sts = sets[i];
      await sim.ask({ type: 'clearRequests' });
      const job = await finishedOn(
        SNAPSHOT_BASE,
        await startSnapshotPrune(SNAPSHOT_BASE, sts, {
          dryRun: false,
          snapshot,
        }),
      );
      const what = `the prune of snap/${sts.name} ${
        snapshot ? 'with' : 'without'
      } snapshots`;
      if (job.status !== 'succeeded')
        throw new BenchmarkError(
          `${what} ended ${job.status}: ${job.reason ?? ''}`,
        );
      expectEqual(
        `claims ${what} deleted (its word)`,
        job.summary.deleted.length,
        PRUNE_ORPHANS,
      );
      // The simulator's word.
      const record = await sim.ask<SnapshotRecordAnswer>({
        type: 'snapshotRecord',
        namespace: 'snap',
      });
      expectEqual(
        `claim DELETEs the simulator served for ${what}`,
        record.claimDeletes,
        PRUNE_ORPHANS,
      );
      expectEqual(
        `VolumeSnapshot creates the simulator served for ${what}`,
        record.snapshotCreates,
        snapshot ? PRUNE_ORPHANS : 0,
      );
      const orphans = new Set(sts.orphans.map((o: any) => o.name));
      const ready = record.snapshots.filter(
        s => s.ready && orphans.has(s.claim),
      ).length;
      expectEqual(
        `ready VolumeSnapshots of snap/${sts.name}'s claims after ${what}`,
        ready,
        snapshot ? PRUNE_ORPHANS : 0,
      );
      (snapshot ? times.snapshots : times.plain).push(
        Date.parse(job.finishedAt) - Date.parse(job.createdAt),
      );
      (snapshot ? profiles.snapshots : profiles.plain).push(
        requestProfile(
          (await requestLog(sim)).filter(r => r.user === sim.ready.userName),
        ),
      );
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const ratio = mean(times.snapshots) / mean(times.plain);
    console.log(
      `prune with snapshots: ${PRUNE_ORPHANS} orphans, snapshots ready at once: job ${times.snapshots
        .map(ms)
        .join(', ')}; the same prune without snapshots ${times.plain
        .map(ms)
        .join(
          ', ',
        )} (plain, with, with, plain; checked from the simulator: ${PRUNE_ORPHANS} claim deletes each, ${PRUNE_ORPHANS} ready VolumeSnapshots for each with, 0 for each without); ratio of means ${ratio.toFixed(
        2,
      )} (target ≤ 1.5)`,
    );
    console.log(
      `prune with snapshots, profile from the simulator's request log (the job's requests, and the time it had none in flight for ≥ 50 ms): with snapshots ${profiles.snapshots.join(
        ' | ',
      )}; without ${profiles.plain.join(' | ')}`,
    );
  } finally {
    backend.kill();
  }
}

/** A job's requests by verb and resource, and the time between them when it had none for ≥ 50 ms (its waits). */
function requestProfile(log: LoggedRequest[]): string {
  const byKind = new Map<string, number>();
  for (const r of log) {
    const kind = `${r.verb} ${r.resource ?? r.path}`;
    byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
  }
  const at = log.map(r => Date.parse(r.time)).sort((a, b) => a - b);
  let idle = 0;
  for (let i = 1; i < at.length; i++)
    if (at[i] - at[i - 1] >= 50) idle += at[i] - at[i - 1];
  return `${log.length} requests over ${ms(
    at.length ? at[at.length - 1] - at[0] : 0,
  )}, ${ms(idle)} idle in gaps ≥ 50 ms; ${[...byKind.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${n} ${k}`)
    .join(', ')}`;
}

/**
 * Heap growth of the backend's process while it answers a live scan of a
 * 50,000-claim namespace with 1,000 orphans, sampled there every 5 ms.
 */
async function benchMemory(sim: BenchSim, backend: BenchBackend) {
  await sim.ask({ type: 'clearRequests' });
  await backend.ask({ type: 'startHeapWatch' });
  const t = performance.now();
  const result = await orphansOf('big');
  const elapsed = performance.now() - t;
  const { peakGrowthBytes } = await backend.ask<HeapGrowth>({
    type: 'stopHeapWatch',
  });
  expectEqual(
    'orphans in the 50,000-claim namespace',
    result.totals.orphans,
    BIG_ORPHANS,
  );
  const requests = checkLiveScanRequests(
    sim,
    await requestLog(sim),
    BIG_ORPHANS,
  );
  console.log(
    `memory: a live scan of a 50,000-claim namespace (${
      result.totals.orphans
    } orphans, checked; ${requests.claimPages} + ${
      requests.podPages
    } list pages, ${requests.volumeGets} volume GETs) took ${ms(
      elapsed,
    )}; the backend's heap grew ${(peakGrowthBytes / 2 ** 20).toFixed(
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
  simDispatcher = newSimAgent(sim);
  userHeaders = { [OIDC_TOKEN_HEADER]: sim.ready.userToken };
  const backend = await forkScript<unknown, BackendRequest>(
    join(__dirname, 'backendProcess.ts'),
    {
      ...process.env,
      BENCH_BACKEND: JSON.stringify(backendSetup(sim.ready)),
      BENCH_BACKEND_PORT: String(BACKEND_PORT),
      LOG_LEVEL: 'warn',
    },
  );
  try {
    if (wanted('prune')) {
      // At 1 replica (a StatefulSet at 0 keeps its claims as paused): 100 claims left behind each.
      await sim.ask({
        type: 'seed',
        namespace: 'prune',
        id: 'prune',
        sets: 2,
        perSet: PRUNE_ORPHANS + 1,
        orphansPerSet: PRUNE_ORPHANS,
      });
      await sim.ask({ type: 'settle' });
      await benchPrune(sim, backend);
    }
    if (wanted('snapshot')) await benchSnapshotPrune(sim);
    // Scans only read: with the controllers paused, the seeded objects stay as they are.
    await sim.ask({ type: 'pauseControllers' });
    if (wanted('scan') || wanted('cached')) await sim.ask(SCAN_NAMESPACE);
    if (wanted('scan')) await benchScan(sim, backend);
    if (wanted('memory')) {
      await sim.ask({
        type: 'seed',
        namespace: 'big',
        id: 'big',
        sets: 500,
        perSet: 100,
        orphansPerSet: BIG_ORPHANS / 500,
      });
      await benchMemory(sim, backend);
    }
    // Last: from here on a cache follows everything the simulator holds.
    if (wanted('cached')) await benchCachedScan(sim);
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
