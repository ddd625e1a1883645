/**
 * npm run bench:frontend — the pvc-pruner card in Chromium, on the demo
 * portal. Prints figures; it is not a test. Targets: the card renders 1,000
 * orphans in under 1 s from the data's arrival, and follows a prune's events
 * within 100 ms.
 *
 * It starts its own demo (test/demo/start.ts: simulator, backend, frontend
 * dev app) in a temporary folder on ports 7037/3037 (BENCH_BACKEND_PORT,
 * BENCH_FRONTEND_PORT), and drives Debian's /usr/bin/chromium (CHROMIUM_PATH)
 * with playwright-core.
 *
 *   A. Render: the orphans request of `orders` is answered (page.route) with
 *      a generated 1,000-orphan payload over 10 StatefulSets. In the page, a
 *      wrapped window.fetch stamps the moment the response is delivered; a
 *      MutationObserver stamps the moment the first StatefulSet's orphan
 *      table holds its first claim; a requestAnimationFrame + setTimeout(0)
 *      after that stamps the frame that shows it. Page reloaded per run.
 *   B. Events: real dry runs of orders-db against the real backend (each
 *      claim's delete slowed by 250 ms in the simulator, so the job outlasts
 *      the card's connecting to its stream). A job re-checks its claims in
 *      one batch, so its events come in bursts: a pvc-deleting per claim,
 *      then, once the deletes answer, a pvc-deleted per claim. Each event's
 *      `at` (stamped by the backend when it stores the event, just before it
 *      streams it) is compared with the wall-clock time at which its line
 *      appeared in the card's event log (MutationObserver); the first event
 *      of each burst is also counted apart from those queued behind it.
 *      Events stored before the card opened the stream (replayed, not live)
 *      are left out. Fails unless every event of every run is found in the
 *      log and every dry run went through all 5 claims.
 *
 * The frontend is the dev server's bundle (React in development mode, slower
 * than a production build), so the figures are pessimistic.
 */
import type {
  OrphansResponse,
  OrphanedPvc,
  PruneEvent,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { Page } from 'playwright-core';
// test/demo is the repository's demo script, not a package.
// eslint-disable-next-line @backstage/no-relative-monorepo-imports
import { launchChromium } from '../demo/chromium';
// eslint-disable-next-line @backstage/no-relative-monorepo-imports
import { requireGuestToken, RunningDemo, startDemo } from '../demo/start';
import { BenchmarkError } from './figures';

const BACKEND_PORT = Number(process.env.BENCH_BACKEND_PORT ?? 7037);
const FRONTEND_PORT = Number(process.env.BENCH_FRONTEND_PORT ?? 3037);
const RENDER_RUNS = Number(process.env.BENCH_RENDER_RUNS ?? 10);
const EVENT_RUNS = Number(process.env.BENCH_EVENT_RUNS ?? 6);
const STATEFUL_SETS = 10;
/** The orphans of the demo's orders-db, which each dry run of the events figure goes through. */
const CLAIMS_PER_DRY_RUN = 5;
/** Events stored closer together than this came in one burst. */
const BURST_MS = 25;
const ORPHANS_PER_SET = 100;
const GI = 1024 ** 3;

const say = (line = '') => process.stdout.write(`${line}\n`);
const fmt = (n: number) => `${n.toFixed(1)} ms`;

function stats(xs: number[]) {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
  return {
    n: sorted.length,
    p50: at(0.5),
    p95: at(0.95),
    max: sorted[sorted.length - 1],
  };
}

function statsLine(label: string, xs: number[]) {
  const s = stats(xs);
  return `${label.padEnd(46)} p50 ${fmt(s.p50).padStart(9)}  p95 ${fmt(
    s.p95,
  ).padStart(9)}  max ${fmt(s.max).padStart(9)}  (n=${s.n})`;
}

/** 10 StatefulSets of 100 orphans each (ordinals 2–51 of two templates); every 10th on a Retain volume. */
function orphansPayload(entityRef: string): OrphansResponse {
  const statefulSets: StatefulSetOrphans[] = [];
  let reclaimable = 0;
  let retained = 0;
  for (let s = 0; s < STATEFUL_SETS; s++) {
    const name = `bench-db-${String(s).padStart(2, '0')}`;
    const orphans: OrphanedPvc[] = [];
    for (let i = 0; i < ORPHANS_PER_SET; i++) {
      const ordinal = 2 + Math.floor(i / 2);
      const template = i % 2 === 0 ? 'data' : 'wal';
      const isRetained = i % 10 === 9;
      const bytes = 20 * GI;
      if (isRetained) retained += bytes;
      else reclaimable += bytes;
      orphans.push({
        name: `${template}-${name}-${ordinal}`,
        uid: `00000000-0000-4000-8000-${String(s * 1000 + i).padStart(
          12,
          '0',
        )}`,
        resourceVersion: String(1000 + i),
        ordinal,
        template,
        phase: 'Bound',
        requested: '20Gi',
        requestedBytes: bytes,
        capacity: '20Gi',
        capacityBytes: bytes,
        storageClassName: isRetained ? 'premium-retain' : 'standard',
        volume: {
          name: `pvc-${s}-${i}-0000-4000-8000-000000000000`,
          reclaimPolicy: isRetained ? 'Retain' : 'Delete',
          phase: 'Bound',
          retained: isRetained,
        },
        createdAt: new Date(Date.now() - 86_400_000 * (i + 1)).toISOString(),
        reattachesAtReplicas: ordinal + 1,
      });
    }
    statefulSets.push({
      name,
      namespace: 'shop',
      uid: `10000000-0000-4000-8000-${String(s).padStart(12, '0')}`,
      replicas: 2,
      ordinals: { start: 0, end: 2 },
      readyReplicas: 2,
      retentionPolicy: { whenScaled: 'Retain', whenDeleted: 'Retain' },
      templates: ['data', 'wal'],
      orphans,
      inUse: ['data', 'wal'].map(template => ({ template, ordinals: [0, 1] })),
      kept: [],
      reclaimableBytes: orphans
        .filter(o => !o.volume?.retained)
        .reduce((n, o) => n + o.requestedBytes, 0),
      retainedBytes: orphans
        .filter(o => o.volume?.retained)
        .reduce((n, o) => n + o.requestedBytes, 0),
    });
  }
  return {
    entityRef,
    clusters: [{ cluster: 'demo', ok: true, statefulSets }],
    totals: {
      orphans: STATEFUL_SETS * ORPHANS_PER_SET,
      reclaimableBytes: reclaimable,
      retainedBytes: retained,
    },
  };
}

/** Installed in every page before its scripts run (the app captures window.fetch at start). */
function instrument() {
  type LogLine = { text: string; at: number };
  const bench = {
    orphansArrived: undefined as number | undefined,
    tableAt: undefined as number | undefined,
    frameAt: undefined as number | undefined,
    sectionsAtTable: 0,
    tablesAtTable: 0,
    streamOpenedAt: [] as number[],
    logLines: [] as LogLine[],
  };
  (window as any).__bench = bench;
  const wallNow = () => performance.timeOrigin + performance.now();
  const origFetch = window.fetch;
  window.fetch = function benchFetch(
    input: RequestInfo | URL,
    init?: RequestInit,
  ) {
    let url: string;
    if (typeof input === 'string') url = input;
    else if (input instanceof URL) url = input.href;
    else url = input.url;
    if (url.includes('/events?after=')) bench.streamOpenedAt.push(wallNow());
    const response = origFetch(input, init);
    if (url.includes('/api/pvc-pruner/v1/orphans')) {
      response.then(
        () => {
          bench.orphansArrived = performance.now();
        },
        () => {},
      );
    }
    return response;
  } as typeof window.fetch;

  const FIRST = 'section[aria-label="StatefulSet shop/bench-db-00"]';
  const observer = new MutationObserver(mutations => {
    const now = performance.now();
    const wall = wallNow();
    for (const mutation of mutations) {
      for (const node of Array.from(mutation.addedNodes)) {
        if (!(node instanceof Element)) continue;
        // A new line, or a new log (the first events replace "No events yet.").
        const lines = node.matches('[role="log"] > li')
          ? [node]
          : Array.from(node.querySelectorAll('[role="log"] > li'));
        for (const line of lines)
          bench.logLines.push({ text: line.textContent ?? '', at: wall });
      }
    }
    if (bench.orphansArrived === undefined || bench.tableAt !== undefined)
      return;
    const table = document.querySelector(`${FIRST} table`);
    if (!table?.textContent?.includes('data-bench-db-00-2')) return;
    bench.tableAt = now;
    const sections = Array.from(
      document.querySelectorAll(
        'section[aria-label^="StatefulSet shop/bench-db-"]',
      ),
    );
    bench.sectionsAtTable = sections.length;
    bench.tablesAtTable = sections.filter(s => s.querySelector('table')).length;
    // The frame that shows it: rAF runs before that frame's paint, a task queued from it after.
    requestAnimationFrame(() =>
      setTimeout(() => {
        bench.frameAt = performance.now();
      }, 0),
    );
  });
  const start = () =>
    observer.observe(document.documentElement, {
      childList: true,
      subtree: true,
    });
  if (document.documentElement) start();
  else document.addEventListener('DOMContentLoaded', start);
}

async function signInIfAsked(page: Page, readySelector: string) {
  const enter = page.getByRole('button', { name: 'Enter' });
  const ready = page.locator(readySelector).first();
  await enter.or(ready).first().waitFor({ timeout: 90_000 });
  if (await enter.isVisible()) await enter.click();
  await ready.waitFor({ timeout: 60_000 });
}

async function benchRender(demo: RunningDemo, page: Page) {
  const entityRef = 'component:default/orders';
  const body = JSON.stringify(orphansPayload(entityRef));
  const orphansRequest = (url: URL) =>
    url.pathname.endsWith('/api/pvc-pruner/v1/orphans');
  await page.route(orphansRequest, route =>
    route.fulfill({ status: 200, contentType: 'application/json', body }),
  );
  const url = `${demo.frontendUrl}/catalog/default/component/orders/kubernetes`;
  const toTable: number[] = [];
  const toFrame: number[] = [];
  let sections = 0;
  let tables = 0;
  for (let run = 0; run <= RENDER_RUNS; run++) {
    if (run === 0) await page.goto(url);
    else await page.reload();
    await signInIfAsked(
      page,
      'section[aria-label="StatefulSet shop/bench-db-00"] table',
    );
    await page.waitForFunction(
      () => (window as any).__bench.frameAt !== undefined,
    );
    const b = await page.evaluate(() => (window as any).__bench);
    // Run 0 warms up the bundle and the sign-in.
    if (run === 0) continue;
    toTable.push(b.tableAt - b.orphansArrived);
    toFrame.push(b.frameAt - b.orphansArrived);
    sections = b.sectionsAtTable;
    tables = b.tablesAtTable;
  }
  await page.unroute(orphansRequest);
  if (sections !== STATEFUL_SETS)
    throw new BenchmarkError(
      `the render figure saw ${sections} StatefulSet sections, not ${STATEFUL_SETS}: it would not time the payload it names`,
    );
  say(
    `A. Render of ${
      STATEFUL_SETS * ORPHANS_PER_SET
    } orphans in ${STATEFUL_SETS} StatefulSets (${(body.length / 1024).toFixed(
      0,
    )} KiB of JSON), from the orphans response's delivery:`,
  );
  say(
    "   method: page.route answers GET /v1/orphans with the payload; in the page a wrapped fetch stamps the response (t0), a MutationObserver the moment the first StatefulSet's table holds its first claim, and rAF + setTimeout(0) after it the frame that shows it; page reloaded per run, after one warm-up run",
  );
  say(`   ${statsLine('first orphan table in the DOM', toTable)}`);
  say(`   ${statsLine('frame showing it painted', toFrame)}`);
  say(
    `   at that moment: ${sections} StatefulSet sections, ${tables} tables rendered (the tables below the fold render as they come into view)`,
  );
  return stats(toFrame);
}

/** A finished job's events, read from its stream (which replays them and ends). */
async function jobEvents(
  demo: RunningDemo,
  token: string,
  jobId: string,
): Promise<PruneEvent[]> {
  const res = await fetch(
    `${demo.backendUrl}/api/pvc-pruner/v1/prune-jobs/${jobId}/events?after=0`,
    { headers: { Authorization: `Bearer ${token}` } },
  );
  const text = await res.text();
  return text
    .split('\n\n')
    .map(frame => frame.split('\n').find(l => l.startsWith('data: ')))
    .filter((line): line is string => Boolean(line))
    .map(line => JSON.parse(line.slice('data: '.length)) as PruneEvent)
    .filter(event => typeof event.seq === 'number');
}

async function benchEvents(demo: RunningDemo, page: Page) {
  await demo.simAdmin('POST', '/faults', {
    verb: 'delete',
    resource: 'persistentvolumeclaims',
    latencyMs: 250,
  });
  const token = await requireGuestToken(demo.backendUrl);
  await page.goto(
    `${demo.frontendUrl}/catalog/default/component/orders/kubernetes`,
  );
  const section = 'section[aria-label="StatefulSet shop/orders-db"]';
  await signInIfAsked(page, `${section} table`);
  const delays: number[] = [];
  const byType = new Map<string, number[]>();
  const replayed: number[] = [];
  /** Live events stored within BURST_MS of the event before them are queued behind it. */
  const firstOfBurst: number[] = [];
  const queuedInBurst: number[] = [];
  let unmatched = 0;
  for (let run = 0; run < EVENT_RUNS; run++) {
    await page.evaluate(() => {
      (window as any).__bench.logLines = [];
      (window as any).__bench.streamOpenedAt = [];
    });
    await page
      .locator(section)
      .getByRole('button', { name: 'Dry run prune of orders-db' })
      .click();
    const dialog = page.getByRole('dialog', {
      name: 'Dry run: prune shop/orders-db',
    });
    const started = page.waitForResponse(
      r =>
        r.url().endsWith('/api/pvc-pruner/v1/prune-jobs') &&
        r.request().method() === 'POST',
    );
    await dialog.getByRole('button', { name: 'Start dry run' }).click();
    const { id } = (await (await started).json()) as { id: string };
    const panel = page.getByRole('region', {
      name: 'Dry run of shop/orders-db progress',
    });
    await panel.getByText('Dry run finished').waitFor({ timeout: 60_000 });
    await page.waitForTimeout(200);
    const b = await page.evaluate(() => (window as any).__bench);
    const streamOpened = Math.min(...(b.streamOpenedAt as number[]));
    const lines = [...(b.logLines as Array<{ text: string; at: number }>)];
    const events = await jobEvents(demo, token, id);
    const wouldDelete = events.filter(e => e.type === 'pvc-deleted').length;
    if (wouldDelete !== CLAIMS_PER_DRY_RUN)
      throw new BenchmarkError(
        `dry run ${
          run + 1
        } would delete ${wouldDelete} claims, not ${CLAIMS_PER_DRY_RUN}: the events figure would not follow the job it names`,
      );
    let previousAt = -Infinity;
    for (const event of events) {
      const at = Date.parse(event.at);
      const inBurst = at - previousAt < BURST_MS;
      previousAt = at;
      const index = lines.findIndex(l => l.text.endsWith(event.message));
      if (index < 0) {
        unmatched++;
        continue;
      }
      const [line] = lines.splice(index, 1);
      if (at < streamOpened) {
        replayed.push(line.at - at);
        continue;
      }
      delays.push(line.at - at);
      (inBurst ? queuedInBurst : firstOfBurst).push(line.at - at);
      byType.set(event.type, [...(byType.get(event.type) ?? []), line.at - at]);
    }
    await panel
      .getByRole('button', {
        name: 'Close the results of the Dry run of shop/orders-db',
      })
      .click();
    await panel.waitFor({ state: 'detached' });
  }
  await demo.simAdmin('DELETE', '/faults');
  if (unmatched > 0)
    throw new BenchmarkError(
      `${unmatched} events of the dry runs were not found in the card's event log: the events figure would leave them out`,
    );
  say();
  say(
    `B. Live events of ${EVENT_RUNS} dry runs of orders-db (${CLAIMS_PER_DRY_RUN} claims each), from the event's \`at\` in the backend to its line in the card's event log:`,
  );
  say(
    `   method: real backend and simulator (each claim's delete slowed by 250 ms, so the job outlasts the card's connecting); \`at\` is stamped by the backend as it stores the event, just before it streams it; the page's MutationObserver stamps (wall clock, same machine) each line added to the card's event log; events matched by message (all found); an event stored within ${BURST_MS} ms of the one before it is queued behind it in a burst (a batch's pvc-deleting, then its pvc-deleted)`,
  );
  say(`   ${statsLine('all live events', delays)}`);
  say(`   ${statsLine('  first of its burst', firstOfBurst)}`);
  say(`   ${statsLine('  queued behind others in a burst', queuedInBurst)}`);
  for (const [type, xs] of byType) say(`   ${statsLine(`  ${type}`, xs)}`);
  if (replayed.length > 0) {
    say(`   ${statsLine('replayed on connect (not counted above)', replayed)}`);
    say(
      '     (events the backend stored before the card opened the stream: job-queued during the POST, and what the job did while the card got the id; the card reads them as it connects)',
    );
  }
  return stats(delays);
}

async function main() {
  const t0 = Date.now();
  say('Starting the demo (simulator, backend, frontend dev server)…');
  const demo = await startDemo({
    backendPort: BACKEND_PORT,
    frontendPort: FRONTEND_PORT,
  });
  const browser = await launchChromium().catch(async e => {
    await demo.stop();
    throw e;
  });
  try {
    const context = await browser.newContext({
      viewport: { width: 1440, height: 900 },
    });
    await context.addInitScript(instrument);
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    page.on('dialog', d => void d.accept());
    say(
      `Demo ready in ${((Date.now() - t0) / 1000).toFixed(
        1,
      )} s; Chromium ${browser.version()}, frontend in development mode.`,
    );
    say();
    const render = await benchRender(demo, page);
    const events = await benchEvents(demo, page);
    say();
    say(
      `Targets: render < 1000 ms: p95 ${fmt(render.p95)} ${
        render.p95 < 1000 ? 'met' : 'MISSED'
      }; event to UI < 100 ms: p95 ${fmt(events.p95)} ${
        events.p95 < 100 ? 'met' : 'MISSED'
      }.`,
    );
  } finally {
    await browser.close().catch(() => {});
    await demo.stop();
  }
}

main().catch(e => {
  process.stderr.write(
    `bench:frontend: ${e instanceof Error ? e.stack ?? e.message : e}\n`,
  );
  process.exit(1);
});
