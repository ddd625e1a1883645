/**
 * npm run bench:fleet — the shared watch cache against kube-sim. Prints
 * figures; it is not a test. Targets (README): a card scan from a warm cache
 * of a 10,000-claim namespace p50 < 20 ms; over 5 minutes, 100 card viewers
 * refreshing every 15 s cost the API server at most 1.1 × the requests of
 * one viewer; the cache holding 100,000 claims and 100,000 pods < 300 MB;
 * the fleet answer for 1,000 entities in 3 clusters from warm caches p50 < 200 ms;
 * an automatic run's planning over 1,000 opted-in entities from a warm cache
 * p50 < 500 ms, with no API request.
 * The simulator, the backend and this client each run in their own process.
 *
 * `npm run bench:fleet -- card memory` runs some figures only. Each figure
 * is a function of the shared setup below; add new ones to FIGURES.
 * `BENCH_CPU_PROFILE=<folder>` writes a CPU profile of the backend over the
 * card's and the fleet's measured rounds there.
 */
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { ForkedScript, forkScript } from 'kube-sim/bench/forkScript';
import type {
  LoggedRequest,
  RequestCounts,
  SimReady,
  SimRequest,
} from './simProcess';
import type {
  PlanFigures,
  PlannerRequest,
  PlannerSetup,
} from './plannerProcess';
import type {
  BackendCounts,
  BackendRequest,
  MemoryUse,
} from './backendProcess';
import {
  BackendSetup,
  BenchEntity,
  kubernetesIdEntity,
  selectorEntity,
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

const dispatcher = new Agent({ connections: 128 });
const MB = 2 ** 20;
const CARD_ROUNDS = 41;
const CARD_WARMUP_ROUNDS = 5;
const REFRESH_MS = 15000;
/** The real 5 minutes of the target; shorten only to try the script out (the README's figures use 300). */
const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 300);

type BenchSim = ForkedScript<SimReady, SimRequest>;
type BenchBackend = ForkedScript<unknown, BackendRequest> & { base: string };

const sleep = (msToWait: number) =>
  new Promise(resolve => setTimeout(resolve, msToWait));

async function startSim(): Promise<BenchSim> {
  return forkScript<SimReady, SimRequest>(join(__dirname, 'simProcess.ts'));
}

/** Annotated entities in the catalog of the card, load and prune figures. */
const CATALOG_ENTITIES = 1000;

/**
 * A catalog of CATALOG_ENTITIES entities with Kubernetes annotations:
 * `special` ones, then fillers that claim nothing in the simulator (most by
 * kubernetes-id, one in twenty by a set-based selector, which the claimant
 * index matches against each StatefulSet one by one).
 */
function catalogOf(special: BenchEntity[]): BenchEntity[] {
  const fillers = Array.from(
    { length: CATALOG_ENTITIES - special.length },
    (_, i) =>
      i % 20 === 0
        ? selectorEntity(`web-${i}`, `app in (web-${i},api-${i})`, {
            owner: `group:default/team-${i % 25}`,
          })
        : kubernetesIdEntity(`svc-${i}`, `svc-${i}`, {
            owner: `group:default/team-${i % 25}`,
          }),
  );
  return [...special, ...fillers];
}

/**
 * The card's StatefulSets that other entities claim too (by their `app`
 * label, in the scan namespace): db-0 to db-9 by one more entity each,
 * db-0 to db-4 by a second one, with a set-based selector. The card's scan
 * must ask about these 15 in one batch, and show each StatefulSet's.
 */
const CARD_SHARERS: BenchEntity[] = Array.from({ length: 15 }, (_, i) =>
  i < 10
    ? selectorEntity(`db-${i}-reader`, `app=db-${i}`, {
        owner: `group:default/team-${i}`,
        namespace: 'scan',
      })
    : selectorEntity(`db-${i - 10}-ops`, `app in (db-${i - 10})`, {
        owner: 'group:default/ops',
        namespace: 'scan',
      }),
);

/** sharedWith each StatefulSet of the card must show: its sharers' refs, sorted. */
function expectedSharedWith(statefulSet: string): string[] {
  const n = Number(statefulSet.replace('db-', ''));
  return [
    ...(n < 10 ? [`component:default/db-${n}-reader`] : []),
    ...(n < 5 ? [`component:default/db-${n}-ops`] : []),
  ].sort();
}

/** The warm cluster's backend (card, memory and load figures): the `scan` entity and its sharers among 1,000. */
const cardSetup = (sim: BenchSim): BackendSetup => ({
  clusters: [serviceAccountCluster('bench', sim.ready)],
  entities: catalogOf([kubernetesIdEntity('scan', 'scan'), ...CARD_SHARERS]),
});

async function startBackend(
  port: number,
  setup: BackendSetup,
): Promise<BenchBackend> {
  const backend = await forkScript<unknown, BackendRequest>(
    join(__dirname, 'backendProcess.ts'),
    {
      ...process.env,
      BENCH_BACKEND: JSON.stringify(setup),
      BENCH_BACKEND_PORT: String(port),
      LOG_LEVEL: 'warn',
    },
  );
  return { ...backend, base: `http://127.0.0.1:${port}/api/pvc-pruner` };
}

/** The card's request: the orphans of the `scan` entity (its StatefulSets are labelled `backstage.io/kubernetes-id=scan`). */
const cardScan = (backend: BenchBackend) =>
  getJson(
    `${backend.base}/v1/orphans?entityRef=component:default/scan`,
    dispatcher,
  );

const seedCardNamespace = (sim: BenchSim) => sim.ask(SCAN_NAMESPACE);

/** The kinds a watch cache follows: StatefulSets, claims, pods, volumes and HorizontalPodAutoscalers. */
const CACHED_KINDS = 5;

/** Until the backend's cache watches every kind it holds (the simulator saw a watch of each). */
async function cacheWatching(sim: BenchSim) {
  const started = performance.now();
  for (;;) {
    const counts = await sim.ask<RequestCounts>({ type: 'requestCounts' });
    if (counts.watchesOpened >= CACHED_KINDS)
      return performance.now() - started;
    if (performance.now() - started > 300000)
      throw new Error('the watch cache did not start watching in 5 minutes');
    await sleep(100);
  }
}

/** The backend's answer for an entity that does not exist: warms its router without starting a cache. */
async function warmRouter(backend: BenchBackend) {
  const res = await request(
    `${backend.base}/v1/orphans?entityRef=component:default/nobody`,
    { dispatcher },
  );
  await res.body.text();
}

/**
 * Backend memory for the cache: 1,000 StatefulSets of 100 replicas (100,000
 * claims, 100,000 pods, 100,000 volumes); the heap after a full GC before the
 * first scan starts the cache, and once it watches every kind.
 */
async function benchCacheMemory({ sim, backend }: WarmCluster) {
  await sim.ask({
    type: 'seed',
    namespace: 'mem',
    id: 'mem',
    sets: 1000,
    perSet: 100,
    orphansPerSet: 0,
  });
  await warmRouter(backend);
  const before = await backend.ask<MemoryUse>({ type: 'memory' });
  await sim.ask({ type: 'clearRequests' });
  const started = performance.now();
  await cardScan(backend); // the first scan reads live, and starts the cache
  await cacheWatching(sim);
  const syncMs = performance.now() - started;
  const after = await backend.ask<MemoryUse>({ type: 'memory' });
  const counts = await sim.ask<RequestCounts>({ type: 'requestCounts' });
  console.log(
    `memory: the cache holding 100,000 claims, 100,000 pods, 100,000 volumes and 1,000 StatefulSets: heap +${(
      (after.heapUsedBytes - before.heapUsedBytes) /
      MB
    ).toFixed(0)} MB after a full GC (target < 300 MB), RSS ${(
      before.rssBytes / MB
    ).toFixed(0)} → ${(after.rssBytes / MB).toFixed(
      0,
    )} MB; listed and watching in ${(syncMs / 1000).toFixed(1)} s with ${
      counts.byVerb.list ?? 0
    } list pages`,
  );
  return true;
}

/**
 * Requests a scan would make if it did not answer from the cache: any read
 * of one namespace, or of one object. A cache that re-lists (a watch that
 * broke) lists whole kinds, cluster-wide; those are counted apart.
 */
const scanRequests = (log: LoggedRequest[]) =>
  log.filter(r => r.namespace !== undefined || r.verb === 'get');

/** Throws unless no request in `log` is one a scan makes; else describes them. */
function answeredFromCache(log: LoggedRequest[], what: string): string {
  const scans = scanRequests(log);
  if (scans.length > 0)
    throw new BenchmarkError(
      `${what} made ${scans.length} requests a scan makes (${scans
        .slice(0, 3)
        .map(r => `${r.verb} ${r.path}`)
        .join('; ')}): they were not all answered from the cache`,
    );
  return log.length === 0
    ? '0'
    : `${log.length}, none a scan's (the cache re-listing or re-watching: ${log
        .slice(0, 3)
        .map(r => `${r.verb} ${r.path}`)
        .join('; ')})`;
}

/**
 * Checks a card answer: every StatefulSet of the namespace and its
 * orphans, each showing the sharers it has (so the claimant check ran).
 */
function checkCardAnswer(card: any) {
  expectEqual('orphans on the card', card.totals.orphans, SCAN_ORPHANS);
  const shown = card.clusters[0].statefulSets as any[];
  expectEqual('StatefulSets on the card', shown.length, 100);
  for (const sts of shown)
    expectEqual(
      `sharedWith of ${sts.name} on the card`,
      (sts.sharedWith ?? []).join(' '),
      expectedSharedWith(sts.name).join(' '),
    );
}

/**
 * Card scans of the 10,000-claim namespace from the warm cache (which also
 * holds the memory figure's objects when both run), with the claimant
 * check against a catalog of 1,000 annotated entities: the client's time
 * per answer, the API requests those scans made (none may be a scan's), and
 * the permission batches (one per scan, naming the 15 sharers).
 */
async function benchCardScan({ sim, backend }: WarmCluster) {
  await seedCardNamespace(sim);
  await cardScan(backend);
  await cacheWatching(sim);
  // Until the watches delivered the seeded namespace.
  while ((await cardScan(backend)).totals.orphans < SCAN_ORPHANS)
    await sleep(100);
  checkCardAnswer(await cardScan(backend));
  await sim.ask({ type: 'clearRequests' });
  await backend.ask({ type: 'clearCounts' });
  const profile = await profiled(backend, 'card');
  const times: number[] = [];
  let bytes = 0;
  for (let round = 0; round < CARD_ROUNDS; round++) {
    const t = performance.now();
    const res = await request(
      `${backend.base}/v1/orphans?entityRef=component:default/scan`,
      { dispatcher, headers: { 'accept-encoding': 'gzip' } },
    );
    bytes = (await res.body.arrayBuffer()).byteLength;
    times.push(performance.now() - t);
  }
  await profile.stop();
  const log = await sim.ask<LoggedRequest[]>({ type: 'requestLog' });
  const counts = await backend.ask<BackendCounts>({ type: 'counts' });
  const requests = answeredFromCache(log, 'the card scans');
  const sharers = CARD_SHARERS.map(e => `component:default/${e.name}`).sort();
  const batches = counts.authorizeCalls.filter(
    c => [...c.entityRefs].sort().join(' ') === sharers.join(' '),
  );
  expectEqual(
    `permission batches naming the ${sharers.length} sharers, over ${CARD_ROUNDS} card scans`,
    batches.length,
    CARD_ROUNDS,
  );
  const warm = times.slice(CARD_WARMUP_ROUNDS);
  console.log(
    `card scan from a warm cache, claimants checked: 10,000 claims / 100 StatefulSets / ${SCAN_ORPHANS} orphans, ${CATALOG_ENTITIES} annotated entities in the catalog (${
      sharers.length
    } of them sharing 10 of the StatefulSets): p50 ${median(warm).toFixed(
      1,
    )} ms, p95 ${percentile(warm, 0.95).toFixed(1)} ms over ${
      warm.length
    } scans after ${CARD_WARMUP_ROUNDS} warm-up ones (target p50 < 20 ms; ${(
      bytes / 1024
    ).toFixed(0)} KB gzipped); checked: ${
      batches.length
    } permission batches of the ${
      sharers.length
    } sharers (one per scan), API requests during those scans: ${requests}; whole-catalog claimant reads meanwhile: ${
      counts.claimantReads
    } (the warm read's refresh, every 10 s)`,
  );
  checkCardAnswer(await cardScan(backend));
}

/** One run of the load figure: `viewers` cards on a fresh backend, each refreshing every 15 s. */
async function viewerLoad(sim: BenchSim, viewers: number, port: number) {
  const backend = await startBackend(port, cardSetup(sim));
  await sim.ask({ type: 'clearRequests' });
  const start = performance.now();
  const end = start + LOAD_SECONDS * 1000;
  const times: number[] = [];
  const viewer = async (offsetMs: number) => {
    for (let at = start + offsetMs; at < end; at += REFRESH_MS) {
      await sleep(at - performance.now());
      const t = performance.now();
      await cardScan(backend);
      times.push(performance.now() - t);
    }
  };
  // The cluster changes meanwhile, so the watches carry events: every 15 s a replica (StatefulSet and pod) goes or comes back.
  const churn = async () => {
    for (let k = 1; start + k * REFRESH_MS < end; k++) {
      await sleep(start + k * REFRESH_MS - REFRESH_MS / 2 - performance.now());
      await sim.ask({
        type: 'scaleByHand',
        namespace: 'scan',
        name: 'db-0',
        replicas: k % 2 ? 94 : 95,
      });
    }
  };
  // Viewers open their cards spread over the first refresh period, as people do.
  await Promise.all([
    churn(),
    ...Array.from({ length: viewers }, (_, i) =>
      viewer((i * REFRESH_MS) / viewers),
    ),
  ]);
  await sleep(Math.max(0, end - performance.now()));
  const counts = await sim.ask<RequestCounts>({ type: 'requestCounts' });
  backend.kill();
  const requests = Object.values(counts.byVerb).reduce((n, c) => n + c, 0);
  return { viewers, counts, requests, scans: times.length, p50: median(times) };
}

/**
 * API server requests over 5 minutes with 1 viewer, then 100 viewers, of
 * the 10,000-claim namespace's card, each run on a fresh backend (a cold
 * cache). Watch events are counted apart from requests.
 */
async function benchViewerLoad() {
  const sim = await startSim();
  try {
    // Controllers paused: the only changes are the scripted ones below, the same in both runs.
    await sim.ask({ type: 'pauseControllers' });
    await seedCardNamespace(sim);
    const runs = [];
    for (const [viewers, port] of [
      [1, 7101],
      [100, 7102],
    ]) {
      const run = await viewerLoad(sim, viewers, port);
      runs.push(run);
      const { list = 0, get = 0, watch = 0 } = run.counts.byVerb;
      console.log(
        `load: ${viewers} viewer(s) for ${LOAD_SECONDS} s: ${
          run.scans
        } card scans (p50 ${ms(run.p50)}); ${
          run.requests
        } API requests (${list} list pages, ${get} GETs, ${watch} watches); ${
          run.counts.watchEvents
        } watch events`,
      );
    }
    console.log(
      `load: requests with 100 viewers ÷ with 1 viewer = ${(
        runs[1].requests / runs[0].requests
      ).toFixed(2)} (target ≤ 1.1)`,
    );
  } finally {
    sim.kill();
  }
}

const FLEET_CLUSTERS = 3;
const FLEET_ENTITIES = 1000;
const FLEET_NAMESPACES = 10;
const FLEET_ROUNDS = 30;
/** One claim left behind per StatefulSet: 1,000 entities × 3 clusters. */
const FLEET_ORPHANS = 3000;
const FLEET_WARMUP_ROUNDS = 5;

/**
 * The fleet answer from warm caches: 1,000 entities, each with one
 * StatefulSet in each of 3 clusters (3 simulators, each its own process),
 * in 10 team namespaces per cluster; 34, 33 and 33 claims per StatefulSet
 * with one left behind (100,000 claims, 3,000 orphans), their pods and 100
 * claim-less pods per namespace (100,000 pods). The backend prices every
 * orphan and may show the unowned (mock permissions allow all: the
 * permission and catalog round trips are in-process here). Times the first
 * page as the fleet page asks for it (limit 500), and the whole answer (both
 * pages).
 */
async function benchFleet() {
  const sims = await Promise.all(
    Array.from({ length: FLEET_CLUSTERS }, () => startSim()),
  );
  let backend: BenchBackend | undefined;
  try {
    await Promise.all(sims.map(sim => sim.ask({ type: 'pauseControllers' })));
    const perNamespace = FLEET_ENTITIES / FLEET_NAMESPACES;
    await Promise.all(
      sims.map(async (sim, c) => {
        for (let n = 0; n < FLEET_NAMESPACES; n++)
          await sim.ask({
            type: 'seed',
            namespace: `team-${n}`,
            id: 'svc',
            sets: perNamespace,
            perSet: c === 0 ? 34 : 33,
            orphansPerSet: 1,
            distinctIdsFrom: n * perNamespace,
            podsWithoutClaims: 100,
          });
      }),
    );
    backend = await startBackend(7103, {
      clusters: sims.map((sim, i) =>
        serviceAccountCluster(`cluster-${i}`, sim.ready),
      ),
      entities: Array.from({ length: FLEET_ENTITIES }, (_, i) =>
        kubernetesIdEntity(`svc-${i}`, `svc-${i}`, {
          owner: `group:default/team-${i % 25}`,
        }),
      ),
      pvcPruner: { pricing: { currency: 'USD', defaultPricePerGiBMonth: 0.1 } },
    });
    const firstPage = `${backend.base}/v1/fleet?limit=500`;
    const started = performance.now();
    // The first answer starts each cluster's cache and waits for it to sync.
    await getJson(firstPage, dispatcher);
    await Promise.all(sims.map(cacheWatching));
    while (
      (await getJson(firstPage, dispatcher)).totals.orphans < FLEET_ORPHANS
    )
      await sleep(100);
    const warmMs = performance.now() - started;
    await Promise.all(sims.map(sim => sim.ask({ type: 'clearRequests' })));
    await backend.ask({ type: 'clearCounts' });
    const profile = await profiled(backend, 'fleet');
    const pageTimes: number[] = [];
    const wholeTimes: number[] = [];
    let bytes = 0;
    let fleet: any;
    for (let round = 0; round < FLEET_ROUNDS; round++) {
      const t = performance.now();
      const res = await request(firstPage, {
        dispatcher,
        headers: { 'accept-encoding': 'gzip' },
      });
      bytes = (await res.body.arrayBuffer()).byteLength;
      pageTimes.push(performance.now() - t);
      const t2 = performance.now();
      fleet = await getJson(firstPage, dispatcher);
      const rest = await getJson(
        `${firstPage}&cursor=${fleet.nextCursor}`,
        dispatcher,
      );
      wholeTimes.push(performance.now() - t2);
      expectEqual(
        'entities the fleet listed',
        fleet.items.length + rest.items.length,
        FLEET_ENTITIES,
      );
      expectEqual(
        'orphans in the fleet totals (each StatefulSet counted once)',
        fleet.totals.orphans,
        FLEET_ORPHANS,
      );
    }
    await profile.stop();
    const logs = await Promise.all(
      sims.map(sim => sim.ask<LoggedRequest[]>({ type: 'requestLog' })),
    );
    const requests = answeredFromCache(logs.flat(), 'the fleet answers');
    const { authorizeCalls } = await backend.ask<BackendCounts>({
      type: 'counts',
    });
    const fleetRequests = FLEET_ROUNDS * 3;
    const page = pageTimes.slice(FLEET_WARMUP_ROUNDS);
    const whole = wholeTimes.slice(FLEET_WARMUP_ROUNDS);
    console.log(
      `fleet answer from warm caches: ${FLEET_ENTITIES} entities, ${FLEET_CLUSTERS} clusters, 100,000 claims (${
        fleet.totals.orphans
      } orphans), 100,000 pods: first page (500 entities) p50 ${median(
        page,
      ).toFixed(0)} ms, p95 ${percentile(page, 0.95).toFixed(
        0,
      )} ms (target p50 < 200 ms; ${(bytes / 1024).toFixed(
        0,
      )} KB gzipped); both pages p50 ${median(whole).toFixed(0)} ms; over ${
        page.length
      } rounds after ${FLEET_WARMUP_ROUNDS} warm-up ones; API requests meanwhile: ${requests} (checked); ${(
        authorizeCalls.length / fleetRequests
      ).toFixed(1)} permission calls per fleet request; caches warm ${(
        warmMs / 1000
      ).toFixed(1)} s after the first request`,
    );
  } finally {
    backend?.kill();
    sims.forEach(sim => sim.kill());
  }
}

const PRUNE_CLAIMS = 100;

/** Runs a prune job of every orphan on the card and waits for its end; fails unless all of them were (or would be) deleted. */
async function pruneJob(backend: BenchBackend, sts: any, dryRun: boolean) {
  const post = await request(`${backend.base}/v1/prune-jobs`, {
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
  const { id } = (await post.body.json()) as any;
  if (post.statusCode !== 202)
    throw new BenchmarkError(`the prune answered ${post.statusCode}`);
  let job;
  do {
    await sleep(20);
    job = await getJson(`${backend.base}/v1/prune-jobs/${id}`, dispatcher);
  } while (['queued', 'running'].includes(job.status));
  if (job.status !== 'succeeded')
    throw new BenchmarkError(
      `the ${dryRun ? 'dry run' : 'prune'} ended ${job.status}: ${
        job.reason ?? ''
      }`,
    );
  expectEqual(
    `claims the ${dryRun ? 'dry run would delete' : 'prune deleted'}`,
    job.summary.deleted.length,
    PRUNE_CLAIMS,
  );
  return Date.parse(job.finishedAt) - Date.parse(job.createdAt);
}

/**
 * A prune's claimant re-check: a dry run, then a prune, of 100 claims of a
 * StatefulSet that two entities claim, in a catalog of 1,000 annotated
 * entities (its own simulator, controllers running, so that the prune's
 * claims and volumes go). Each job must read the catalog once, at its
 * start, and check each claim against that read: one read per job, not one
 * per claim.
 */
async function benchPruneClaimants() {
  const sim = await startSim();
  let backend: BenchBackend | undefined;
  try {
    await sim.ask({
      type: 'seed',
      namespace: 'prune',
      id: 'prune',
      sets: 1,
      perSet: PRUNE_CLAIMS + 1,
      orphansPerSet: PRUNE_CLAIMS,
    });
    await sim.ask({ type: 'settle' });
    backend = await startBackend(7104, {
      clusters: [serviceAccountCluster('bench', sim.ready)],
      entities: catalogOf([
        kubernetesIdEntity('prune', 'prune'),
        selectorEntity('prune-reader', 'app=db-0', {
          owner: 'group:default/team-1',
          namespace: 'prune',
        }),
      ]),
    });
    const card = await getJson(
      `${backend.base}/v1/orphans?entityRef=component:default/prune`,
      dispatcher,
    );
    const [sts] = card.clusters[0].statefulSets;
    expectEqual('orphans on the prune card', sts.orphans.length, PRUNE_CLAIMS);
    expectEqual(
      'sharedWith on the prune card',
      (sts.sharedWith ?? []).join(' '),
      'component:default/prune-reader',
    );
    const claimants = [
      'component:default/prune',
      'component:default/prune-reader',
    ];
    const lines: string[] = [];
    for (const dryRun of [true, false]) {
      await backend.ask({ type: 'clearCounts' });
      const jobMs = await pruneJob(backend, sts, dryRun);
      const counts = await backend.ask<BackendCounts>({ type: 'counts' });
      // The POST's check and the job's start's: each asks about both claimants at once.
      const batches = counts.authorizeCalls.filter(
        c => [...c.entityRefs].sort().join(' ') === claimants.join(' '),
      ).length;
      expectEqual(
        `catalog reads of the ${
          dryRun ? 'dry run' : 'prune'
        } job of ${PRUNE_CLAIMS} claims (one per job, not one per claim)`,
        counts.claimantReads,
        1,
      );
      expectEqual(
        `permission batches naming both claimants for the ${
          dryRun ? 'dry run' : 'prune'
        }`,
        batches,
        2,
      );
      lines.push(
        `${dryRun ? 'dry run' : 'prune'} ${ms(jobMs)}: ${
          counts.claimantReads
        } catalog read, ${batches} permission batches of both claimants (the POST's, the job start's)`,
      );
    }
    console.log(
      `prune claimant re-check, a job of ${PRUNE_CLAIMS} claims of a StatefulSet 2 entities claim, ${CATALOG_ENTITIES} annotated entities in the catalog (checked: one catalog read per job): ${lines.join(
        '; ',
      )}`,
    );
  } finally {
    backend?.kill();
    sim.kill();
  }
}

const PLAN_ENTITIES = 1000;
const PLAN_NAMESPACES = 10;
const PLAN_ROUNDS = 25;
const PLAN_WARMUP_ROUNDS = 5;
/** Orphans per StatefulSet (of 12 claims). */
const PLAN_ORPHANS_PER_SET = 2;

/**
 * One automatic run's planning (the prunes excluded) from a warm cache:
 * 1,000 entities opted in, each with one StatefulSet of 12 claims, 2 of
 * them orphans, in 10 namespaces (12,000 claims, 10,000 pods, 12,000
 * volumes). Even entities opted in with a grace of 1 s, which has passed
 * since the planner first saw their orphans, so those are eligible; odd
 * ones with 1 day, less than notifyBefore (2 days), so those are upcoming.
 * The planner runs in its own process, as the plugin builds it; times the
 * run's planning there (AnnouncingPlanner.plan(): AutoPrunePlanner.plan(),
 * then the announcements written to the database), and checks every plan
 * found the 1,000 entities, their StatefulSets and orphans, kept every one
 * once announced, and that the simulator served no request meanwhile.
 */
async function benchAutoPrunePlan() {
  const sim = await startSim();
  let planner: ForkedScript<unknown, PlannerRequest> | undefined;
  try {
    await sim.ask({ type: 'pauseControllers' });
    const perNamespace = PLAN_ENTITIES / PLAN_NAMESPACES;
    for (let n = 0; n < PLAN_NAMESPACES; n++)
      await sim.ask({
        type: 'seed',
        namespace: `auto-${n}`,
        id: 'auto',
        sets: perNamespace,
        perSet: 12,
        orphansPerSet: PLAN_ORPHANS_PER_SET,
        distinctIdsFrom: n * perNamespace,
      });
    const setup: PlannerSetup = {
      clusters: [serviceAccountCluster('bench', sim.ready)],
      entities: Array.from({ length: PLAN_ENTITIES }, (_, i) => {
        const entity = kubernetesIdEntity(`auto-${i}`, `auto-${i}`, {
          owner: `group:default/team-${i % 25}`,
        });
        entity.annotations['pvc-pruner.backstage.io/auto-prune'] =
          i % 2 === 0 ? '1s' : '1d';
        return entity;
      }),
      autoPrune: { enabled: true, minimumGrace: '1s', notifyBefore: '2d' },
    };
    planner = await forkScript<unknown, PlannerRequest>(
      join(__dirname, 'plannerProcess.ts'),
    );
    await planner.ask({ type: 'setup', setup });
    const plan = () => planner!.ask<PlanFigures>({ type: 'plan' });
    const orphans = PLAN_ENTITIES * PLAN_ORPHANS_PER_SET;
    // The first plan starts the cache; plans until one answers from it with every orphan, first seen now.
    const started = performance.now();
    for (;;) {
      const first = await plan();
      if (first.clustersFailed.length === 0 && first.considered === orphans)
        break;
      if (performance.now() - started > 300000)
        throw new BenchmarkError(
          `the planner's cache did not answer in 5 minutes: ${JSON.stringify(
            first,
          )}`,
        );
      await sleep(100);
    }
    await cacheWatching(sim);
    await sleep(1500); // the 1 s grace passes
    await sim.ask({ type: 'clearRequests' });
    const times: number[] = [];
    const plannerTimes: number[] = [];
    let last: PlanFigures | undefined;
    for (let round = 0; round < PLAN_ROUNDS; round++) {
      last = await plan();
      times.push(last.ms);
      plannerTimes.push(last.plannerMs);
      expectEqual(
        'claims planned once announced (eligible or upcoming)',
        last.announced,
        orphans,
      );
      expectEqual(
        'clusters the planner could not read',
        last.clustersFailed.join('; '),
        '',
      );
      expectEqual(
        'entities planned (claimants of the planned StatefulSets)',
        last.entities,
        PLAN_ENTITIES,
      );
      expectEqual('StatefulSets planned', last.groups, PLAN_ENTITIES);
      expectEqual('orphans considered', last.considered, orphans);
      expectEqual(
        'eligible claims (the 1 s graces)',
        last.eligible,
        orphans / 2,
      );
      expectEqual(
        'upcoming claims (the 1 d graces)',
        last.upcoming,
        orphans / 2,
      );
    }
    const log = await sim.ask<LoggedRequest[]>({ type: 'requestLog' });
    expectEqual(
      `API requests during ${PLAN_ROUNDS} plans (${log
        .slice(0, 3)
        .map(r => `${r.verb} ${r.path}`)
        .join('; ')})`,
      log.length,
      0,
    );
    const warm = times.slice(PLAN_WARMUP_ROUNDS);
    const warmPlanner = plannerTimes.slice(PLAN_WARMUP_ROUNDS);
    console.log(
      `automatic run planning from a warm cache: ${PLAN_ENTITIES} opted-in entities, ${PLAN_ENTITIES} StatefulSets, 12,000 claims (${orphans} orphans: ${
        last!.eligible
      } eligible, ${
        last!.upcoming
      } upcoming), the prunes excluded: p50 ${median(warm).toFixed(
        0,
      )} ms, p95 ${percentile(warm, 0.95).toFixed(0)} ms over ${
        warm.length
      } plans after ${PLAN_WARMUP_ROUNDS} warm-up ones, the announcements included (the planner alone: p50 ${median(
        warmPlanner,
      ).toFixed(0)} ms, p95 ${percentile(warmPlanner, 0.95).toFixed(
        0,
      )} ms) (target p50 < 500 ms); checked: ${last!.entities} entities and ${
        last!.groups
      } StatefulSets planned in every plan, API requests during the plans: ${
        log.length
      }`,
    );
  } finally {
    planner?.kill();
    sim.kill();
  }
}

/** A simulator (controllers paused: reads only) and a backend, shared by the figures that read a warm cache. */
interface WarmCluster {
  sim: BenchSim;
  backend: BenchBackend;
}

/** Figures on the shared warm cluster, in order. (The fleet figure has three clusters of its own: benchFleet.) */
const WARM_FIGURES: Record<string, (cluster: WarmCluster) => Promise<unknown>> =
  {
    memory: benchCacheMemory,
    card: benchCardScan,
  };

async function main() {
  const only = new Set(process.argv.slice(2));
  const wanted = (figure: string) => only.size === 0 || only.has(figure);
  const warm = Object.keys(WARM_FIGURES).filter(wanted);
  if (warm.length) {
    const sim = await startSim();
    await sim.ask({ type: 'pauseControllers' });
    const backend = await startBackend(7100, cardSetup(sim));
    try {
      for (const figure of warm) await WARM_FIGURES[figure]({ sim, backend });
    } finally {
      backend.kill();
      sim.kill();
    }
  }
  if (wanted('prune')) await benchPruneClaimants();
  if (wanted('fleet')) await benchFleet();
  if (wanted('autoprune')) await benchAutoPrunePlan();
  if (wanted('load')) await benchViewerLoad();
  await dispatcher.close();
}

main().catch(e => {
  console.error(e);
  process.exitCode = 1;
});
