/*
 * `npm start`: the pvc-pruner demo portal, all in one terminal.
 *
 *   1. two Kubernetes API simulators (test/kube-sim) over https, in this
 *      process: "demo" (the demo scenario, a service-account token in
 *      app-config.yaml) and "warehouse" (scenarios/warehouse.yaml, found
 *      through the catalog locator, reached with an x509 client certificate);
 *      .demo/kubeconfig has a context for each;
 *   2. the demo backend (plugins/pvc-pruner-backend, `backstage-cli package start`),
 *      pointed at the simulator through the PVC_PRUNER_DEMO_* variables that
 *      app-config.yaml substitutes;
 *   3. the frontend dev app (plugins/pvc-pruner, `backstage-cli package start`).
 *
 * It waits until each is ready, prints one ready line, and stops everything on
 * Ctrl-C. Child output goes to .demo/logs/; the terminal shows only warnings
 * and errors (all of it with --verbose).
 *
 * Run: node --require @backstage/cli/config/nodeTransform.cjs test/demo/start.ts [--verbose] [--reset] [--time-factor F]
 *        [--state-dir DIR] [--backend-port N] [--frontend-port N]
 *
 * `startDemo()` runs this script in a child process for the browser tests
 * (test/e2e) and the frontend benchmark (test/bench), with a temporary state
 * folder and ports of their own, so that they run beside a developer's demo.
 */
import { ChildProcess, spawn } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
  WriteStream,
} from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs, stripVTControlCharacters } from 'node:util';
import { KubeSim, loadScenario, PolicyRule, startKubeSim } from 'kube-sim';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { SupervisedProcess, Supervisor } from './supervisor';

const ROOT = resolve(__dirname, '../..');
// The state folder (--state-dir): databases, kubeconfig and logs.
let DEMO_DIR = join(ROOT, '.demo');
let LOG_DIR = join(DEMO_DIR, 'logs');
let KUBECONFIG = join(DEMO_DIR, 'kubeconfig');
const CLI = require.resolve('@backstage/cli/bin/backstage-cli', {
  paths: [ROOT],
});

// The ports of app-config.yaml (backend.baseUrl, app.baseUrl); --backend-port
// and --frontend-port override them through APP_CONFIG_* variables.
const DEFAULT_BACKEND_PORT = 7007;
const DEFAULT_FRONTEND_PORT = 3000;
let BACKEND_URL = `http://localhost:${DEFAULT_BACKEND_PORT}`;
let FRONTEND_URL = `http://localhost:${DEFAULT_FRONTEND_PORT}`;
const READY_TIMEOUT_MS = 5 * 60_000;
const STOP_TIMEOUT_MS = 10_000;

const USAGE = `Usage: npm start [-- [--verbose] [--reset] [--time-factor F] [--state-dir DIR] [--backend-port N] [--frontend-port N]]
  --verbose          show all output of the backend and the frontend dev server (default: warnings and errors)
  --reset            delete the demo databases in the state folder first (job history, catalog)
  --time-factor F    simulated-time factor of the cluster (default 0.2: a 10 s grace period takes 2 s)
  --state-dir DIR    where the databases, kubeconfig and logs go (default .demo/)
  --backend-port N   the backend's port (default ${DEFAULT_BACKEND_PORT})
  --frontend-port N  the frontend dev server's port (default ${DEFAULT_FRONTEND_PORT})`;

/**
 * What Backstage's service account may do in the demo cluster: read what the
 * Kubernetes tab shows and what pvc-pruner inspects, delete claims, and hold
 * the pvc-pruner Lease. A real cluster would bind these rules to a ClusterRole.
 */
export const BACKSTAGE_RULES: PolicyRule[] = [
  {
    apiGroups: [''],
    resources: [
      'pods',
      'services',
      'configmaps',
      'limitranges',
      'resourcequotas',
      'persistentvolumeclaims',
      'persistentvolumes',
    ],
    verbs: ['get', 'list', 'watch'],
  },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['delete'] },
  {
    apiGroups: ['apps'],
    resources: ['deployments', 'replicasets', 'statefulsets', 'daemonsets'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['autoscaling'],
    resources: ['horizontalpodautoscalers'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['batch'],
    resources: ['jobs', 'cronjobs'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['networking.k8s.io'],
    resources: ['ingresses'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
];

const base64 = (text: string) => Buffer.from(text).toString('base64');

/**
 * The second cluster, "warehouse": reached through the catalog locator (a
 * kubernetes-cluster Resource this writes to the state folder, since its
 * address is only known now), with an x509 client certificate for user
 * `backstage` in group `backstage`, which gets BACKSTAGE_RULES.
 */
async function startWarehouseCluster(timeFactor: number) {
  const cluster = await startKubeSim({
    https: true,
    scenario: loadScenario(
      join(ROOT, 'test/kube-sim/scenarios/warehouse.yaml'),
    ),
    timeFactor,
  });
  warehouseSim = cluster;
  const client = cluster.issueClientCertificate({
    user: 'backstage',
    groups: ['backstage'],
  });
  cluster.addBinding({
    subjects: [{ kind: 'Group', name: 'backstage' }],
    rules: BACKSTAGE_RULES,
  });
  writeFileSync(
    join(DEMO_DIR, 'warehouse-cluster.yaml'),
    stringifyYaml({
      apiVersion: 'backstage.io/v1alpha1',
      kind: 'Resource',
      metadata: {
        name: 'warehouse',
        title: 'Warehouse',
        description:
          "The demo's second cluster, found by the catalog cluster locator (written by test/demo/start.ts)",
        annotations: {
          'kubernetes.io/api-server': cluster.url,
          'kubernetes.io/api-server-certificate-authority': base64(
            cluster.caCert!,
          ),
          'kubernetes.io/auth-provider': 'x509',
          'kubernetes.io/skip-metrics-lookup': 'true',
        },
      },
      spec: { type: 'kubernetes-cluster', owner: 'group:default/checkout' },
    }),
  );
  return { client, kubeconfig: cluster.kubeconfig };
}

/** One kubeconfig with a context per cluster (each simulator's admin), the first one current. */
function mergeKubeconfigs(configs: Record<string, string>) {
  const merged = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [] as unknown[],
    users: [] as unknown[],
    contexts: [] as unknown[],
    'current-context': Object.keys(configs)[0],
  };
  for (const [name, yaml] of Object.entries(configs)) {
    const config = parseYaml(yaml);
    merged.clusters.push({ name, cluster: config.clusters[0].cluster });
    merged.users.push({ name: `${name}-admin`, user: config.users[0].user });
    merged.contexts.push({
      name,
      context: {
        ...config.contexts[0].context,
        cluster: name,
        user: `${name}-admin`,
      },
    });
  }
  return merged;
}

const started = Date.now();
/** A path for people: relative to the working folder when inside it. */
const shown = (path: string) => {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
};
const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** A line of the backend's logger in development: `<timestamp> <plugin> <level> <message>`. */
const BACKEND_LOG_LINE = /^\d{4}-\d\d-\d\dT[\d:.]+Z \S+ (\w+) /;
/** Other output worth a user's eye: compile errors, crashes, restarts. */
const NOTEWORTHY =
  /\b(warn|warning|error|errors|fatal|exception|failed|EADDRINUSE|ERR!|restarting)\b/i;

/**
 * Whether a line shows without --verbose: the backend logger's warnings and
 * errors (not its info lines, such as a denied prune's audit event), and
 * anything else that looks like a problem.
 */
function isNoteworthy(line: string) {
  const level = BACKEND_LOG_LINE.exec(line)?.[1];
  if (level) return level === 'warn' || level === 'error';
  return NOTEWORTHY.test(line);
}

interface Child {
  name: string;
  proc: ChildProcess;
  log: WriteStream;
  tail: string[];
  exited: boolean;
  /** How it exited: `code 1`, `signal SIGKILL`. */
  exitReason?: string;
  exit: Promise<void>;
  /** Set for a supervised child: what to do when its server process dies once the demo is ready. */
  onServerDown?: () => void;
  /** The CLI runs the server in a process of its own (the backend), and keeps running when that process dies. */
  serverProcess?: {
    seen: boolean;
    missingChecks: number;
    reportedDown: boolean;
  };
}

const children: Child[] = [];
let sim: KubeSim | undefined;
let warehouseSim: KubeSim | undefined;
let verbose = false;
let stopping = false;
let ready = false;
let backendSupervisor: Supervisor | undefined;

function startChild(
  name: string,
  packageDir: string,
  env: NodeJS.ProcessEnv,
  options: { serverProcess?: boolean; supervised?: boolean } = {},
): Child {
  // A restart appends, so the log keeps what the run before it printed.
  const log = createWriteStream(join(LOG_DIR, `${name}.log`), {
    flags: options.supervised && ready ? 'a' : 'w',
  });
  // Its own process group, so stopping it reaches the processes it starts.
  const proc = spawn(process.execPath, [CLI, 'package', 'start'], {
    cwd: join(ROOT, packageDir),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const child: Child = {
    name,
    proc,
    log,
    tail: [],
    exited: false,
    exit: Promise.resolve(),
    serverProcess: options.serverProcess
      ? { seen: false, missingChecks: 0, reportedDown: false }
      : undefined,
  };
  child.exit = new Promise(resolveExit => {
    proc.once('exit', (code, signal) => {
      child.exited = true;
      child.exitReason = signal ? `signal ${signal}` : `code ${code}`;
      if (!stopping && options.supervised && ready) {
        // The supervisor restarts it; first everything it started goes.
        signalGroup(child, 'SIGKILL');
      } else if (!stopping) {
        say(
          `[${name}] exited unexpectedly (${
            signal ?? `code ${code}`
          }); last lines (all in ${shown(log.path as string)}):`,
        );
        // Everything it started goes with it.
        signalGroup(child, 'SIGKILL');
        for (const line of child.tail.slice(-30)) say(`[${name}]   ${line}`);
        void stop(1);
      }
      resolveExit();
    });
  });
  proc.once('error', e => say(`[${name}] could not start: ${e.message}`));
  for (const stream of [proc.stdout!, proc.stderr!]) {
    let buffered = '';
    let showFollowing = 0;
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split(/\r?\n/);
      buffered = lines.pop() ?? '';
      for (const raw of lines) {
        const line = stripVTControlCharacters(raw);
        log.write(`${line}\n`);
        child.tail.push(line);
        if (child.tail.length > 60) child.tail.shift();
        if (!line.trim()) continue;
        let show = verbose;
        if (isNoteworthy(line)) {
          show = true;
          showFollowing = 20;
        } else if (showFollowing > 0 && /^\s/.test(line)) {
          show = true;
          showFollowing--;
        } else {
          showFollowing = 0;
        }
        if (show) say(`[${name}] ${process.stdout.isTTY ? raw : line}`);
      }
    });
  }
  children.push(child);
  return child;
}

/** The child processes of a process, from /proc (Linux); undefined where that cannot be read. */
function childPids(pid: number): number[] | undefined {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap(task =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8')
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    );
  } catch {
    return undefined;
  }
}

/**
 * `backstage-cli package start` keeps running when the backend process it
 * started dies (it restarts it on the next file change). Before the demo is
 * ready that is fatal; after, it is worth a line.
 */
function watchServerProcesses() {
  const timer = setInterval(() => {
    for (const child of children) {
      const server = child.serverProcess;
      if (!server || child.exited || stopping || child.proc.pid === undefined)
        continue;
      const pids = childPids(child.proc.pid);
      if (pids === undefined) continue;
      if (pids.length > 0) {
        server.seen = true;
        server.missingChecks = 0;
        server.reportedDown = false;
        continue;
      }
      if (!server.seen || ++server.missingChecks < 3 || server.reportedDown)
        continue;
      server.reportedDown = true;
      const logPath = shown(child.log.path as string);
      if (!ready) {
        say(
          `[${child.name}] the ${
            child.name
          } process exited during start-up (log: ${logPath})${
            child.tail.length ? '; its last lines:' : ''
          }`,
        );
        for (const line of child.tail.slice(-30))
          say(`[${child.name}]   ${line}`);
        void stop(1);
      } else if (child.onServerDown) {
        child.onServerDown();
      } else {
        say(
          `[${child.name}] the ${child.name} process exited (see ${logPath}); it restarts when you change one of its files`,
        );
      }
    }
  }, 500);
  timer.unref();
}

/** True while any process of the child's process group is alive. */
function groupAlive(child: Child) {
  if (child.proc.pid === undefined) return false;
  try {
    process.kill(-child.proc.pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(child: Child, signal: NodeJS.Signals) {
  if (child.proc.pid === undefined) return;
  try {
    process.kill(-child.proc.pid, signal);
  } catch {
    // already gone
  }
}

async function stop(code: number): Promise<never> {
  if (stopping) return new Promise<never>(() => {});
  stopping = true;
  backendSupervisor?.stop();
  const anythingStarted = children.length > 0 || sim !== undefined;
  if (anythingStarted) say('Stopping the demo…');
  for (const child of children) {
    // The CLI waits forever for a server process that already died; don't ask it.
    signalGroup(
      child,
      child.serverProcess?.reportedDown ? 'SIGKILL' : 'SIGINT',
    );
  }
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (children.some(groupAlive) && Date.now() < deadline) await sleep(100);
  for (const child of children.filter(groupAlive)) {
    say(
      `[${child.name}] did not stop within ${
        STOP_TIMEOUT_MS / 1000
      } s; killing it`,
    );
    signalGroup(child, 'SIGKILL');
  }
  await Promise.race([Promise.all(children.map(c => c.exit)), sleep(2000)]);
  await sim?.close().catch(() => {});
  await warehouseSim?.close().catch(() => {});
  await Promise.all(
    children.map(c => new Promise<void>(r => c.log.end(() => r()))),
  );
  if (anythingStarted) say('Demo stopped.');
  process.exit(code);
}

/** Last resort when this process ends another way (an uncaught error): leave no process behind. */
process.on('exit', () => {
  for (const child of children) signalGroup(child, 'SIGKILL');
});

function onSignal(signal: NodeJS.Signals) {
  if (stopping) {
    say(`${signal} again: killing everything now`);
    for (const child of children) signalGroup(child, 'SIGKILL');
    process.exit(130);
  }
  void stop(signal === 'SIGINT' ? 0 : 1);
}

async function portFree(port: number) {
  return new Promise<boolean>(resolvePort => {
    const server = createServer();
    server.once('error', () => resolvePort(false));
    server.listen(port, () => server.close(() => resolvePort(true)));
  });
}

async function get(url: string, init?: RequestInit) {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
  } catch {
    return undefined;
  }
}

/** Polls `check` until it returns a truthy value; gives up when a child dies or the time runs out. */
async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = started + READY_TIMEOUT_MS;
  for (;;) {
    if (stopping) return new Promise<T>(() => {});
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) {
      say(
        `Gave up waiting for ${what} after ${
          READY_TIMEOUT_MS / 1000
        } s; see ${shown(LOG_DIR)}/`,
      );
      return stop(1);
    }
    await sleep(500);
  }
}

/**
 * Signs in as the demo's guest (POST /api/auth/guest/refresh) and returns the
 * guest's Backstage token once the catalog knows them as a member of team
 * checkout (before that they own nothing); undefined until then.
 */
export async function guestToken(
  backendUrl: string,
): Promise<string | undefined> {
  const res = await get(`${backendUrl}/api/auth/guest/refresh`, {
    method: 'POST',
    headers: { 'X-Requested-With': 'XMLHttpRequest' },
  });
  if (!res?.ok) return undefined;
  const body = (await res.json()) as {
    backstageIdentity?: {
      token?: string;
      identity?: { ownershipEntityRefs?: string[] };
    };
  };
  const refs = body.backstageIdentity?.identity?.ownershipEntityRefs ?? [];
  return refs.includes('group:default/checkout')
    ? body.backstageIdentity?.token
    : undefined;
}

/** The environment of the demo backend (dev/index.ts and app-config.yaml read it): the cluster to use and where its SQLite files go. */
export function demoBackendEnv(options: {
  stateDir: string;
  kubeUrl: string;
  kubeToken: string;
  /** PEM of the cluster's CA. */
  kubeCa: string;
  /** The client certificate (PEM) the demo's second cluster, warehouse, authenticates. */
  warehouseClient?: { cert: string; key: string };
}): NodeJS.ProcessEnv {
  const pem = (text: string) => Buffer.from(text).toString('base64');
  return {
    ...process.env,
    NODE_ENV: 'development',
    BROWSER: 'none',
    PVC_PRUNER_DEMO_DIR: options.stateDir,
    PVC_PRUNER_DEMO_KUBE_URL: options.kubeUrl,
    PVC_PRUNER_DEMO_KUBE_TOKEN: options.kubeToken,
    PVC_PRUNER_DEMO_KUBE_CA: pem(options.kubeCa),
    ...(options.warehouseClient
      ? {
          PVC_PRUNER_DEMO_WAREHOUSE_CLIENT_CERT: pem(
            options.warehouseClient.cert,
          ),
          PVC_PRUNER_DEMO_WAREHOUSE_CLIENT_KEY: pem(
            options.warehouseClient.key,
          ),
        }
      : {}),
  };
}

/** The backend is ready when pvc-pruner answers and the catalog has loaded the demo entities (or the guest would own nothing). */
async function waitForBackend() {
  await waitFor(
    'the backend (/api/pvc-pruner/health)',
    async () => (await get(`${BACKEND_URL}/api/pvc-pruner/health`))?.ok,
  );
  const token = await waitFor(
    'the demo catalog (the guest as a member of group checkout)',
    () => guestToken(BACKEND_URL),
  );
  await waitFor('the demo components in the catalog', async () => {
    const res = await get(`${BACKEND_URL}/api/catalog/entities/by-refs`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({
        entityRefs: [
          'component:default/orders',
          'component:default/cart',
          'component:default/search-index',
        ],
      }),
    });
    if (!res?.ok) return undefined;
    const { items } = (await res.json()) as { items: unknown[] };
    return items.every(Boolean);
  });
  await waitForWarehouseInCatalog(token);
}

/**
 * The catalog is kept in the state folder, and with it the warehouse Resource
 * of the last run: the address and CA of a simulator that is gone. The
 * catalog would read the new file minutes later; until then the card says
 * warehouse is unreachable. Ask for a refresh now and wait for it.
 */
async function waitForWarehouseInCatalog(token: string) {
  const url = warehouseSim!.url;
  const headers = {
    Authorization: `Bearer ${token}`,
    'Content-Type': 'application/json',
  };
  let refreshedAt = 0;
  await waitFor(
    'the warehouse cluster at its new address in the catalog',
    async () => {
      const res = await get(
        `${BACKEND_URL}/api/catalog/entities/by-name/resource/default/warehouse`,
        { headers },
      );
      if (res?.ok) {
        const entity = (await res.json()) as {
          metadata: { annotations?: Record<string, string> };
        };
        if (entity.metadata.annotations?.['kubernetes.io/api-server'] === url)
          return true;
      }
      if (Date.now() - refreshedAt > 5000) {
        refreshedAt = Date.now();
        await get(`${BACKEND_URL}/api/catalog/refresh`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ entityRef: 'resource:default/warehouse' }),
        });
      }
      return undefined;
    },
  );
}

/**
 * One run of the backend, for the supervisor. `backstage-cli package start`
 * restarts its server only on a file change, so when the server process
 * dies the CLI is killed too and the run has ended; it has also ended when
 * the CLI exits. Either way, once nothing of its process group is left.
 */
function launchBackend(env: NodeJS.ProcessEnv): SupervisedProcess {
  const restart = ready;
  const previous = children.findIndex(c => c.name === 'backend');
  if (previous >= 0) children.splice(previous, 1)[0].log.end();
  const child = startChild('backend', 'plugins/pvc-pruner-backend', env, {
    serverProcess: true,
    supervised: true,
  });
  let serverDown = false;
  child.onServerDown = () => {
    serverDown = true;
    signalGroup(child, 'SIGKILL');
  };
  if (restart) void sayWhenServing(child);
  return {
    ended: child.exit.then(async () => {
      while (groupAlive(child)) await sleep(100);
      return serverDown ? 'its server process died' : child.exitReason!;
    }),
  };
}

async function sayWhenServing(child: Child) {
  while (!child.exited && !stopping) {
    if ((await get(`${BACKEND_URL}/api/pvc-pruner/health`))?.ok) {
      say(`[backend] backend is serving again at ${BACKEND_URL}`);
      return;
    }
    await sleep(500);
  }
}

async function waitForFrontend() {
  await waitFor('the frontend dev server', async () => {
    const res = await get(FRONTEND_URL);
    return res?.ok && (await res.text()).includes('id="root"');
  });
}

async function main() {
  const { values } = parseArgs({
    options: {
      verbose: { type: 'boolean', default: false },
      reset: { type: 'boolean', default: false },
      'time-factor': { type: 'string', default: '0.2' },
      'state-dir': { type: 'string' },
      'backend-port': { type: 'string', default: String(DEFAULT_BACKEND_PORT) },
      'frontend-port': {
        type: 'string',
        default: String(DEFAULT_FRONTEND_PORT),
      },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    say(USAGE);
    return;
  }
  verbose = Boolean(values.verbose);
  const timeFactor = Number(values['time-factor']);
  if (!(timeFactor > 0))
    throw new Error(`--time-factor must be a positive number\n${USAGE}`);

  const backendPort = Number(values['backend-port']);
  const frontendPort = Number(values['frontend-port']);
  for (const option of ['backend-port', 'frontend-port'] as const) {
    const port = Number(values[option]);
    if (!Number.isInteger(port) || port <= 0 || port > 65535)
      throw new Error(`--${option} ${values[option]} is not a port\n${USAGE}`);
  }
  BACKEND_URL = `http://localhost:${backendPort}`;
  FRONTEND_URL = `http://localhost:${frontendPort}`;
  if (values['state-dir']) {
    DEMO_DIR = resolve(values['state-dir']);
    LOG_DIR = join(DEMO_DIR, 'logs');
    KUBECONFIG = join(DEMO_DIR, 'kubeconfig');
  }

  for (const port of [backendPort, frontendPort]) {
    if (!(await portFree(port))) {
      throw new Error(
        `port ${port} is in use (is another demo running?); the demo needs ports ${backendPort} and ${frontendPort}`,
      );
    }
  }
  mkdirSync(LOG_DIR, { recursive: true });
  if (values.reset) {
    for (const file of readdirSync(DEMO_DIR).filter(f =>
      /\.sqlite(-wal|-shm|-journal)?$/.test(f),
    ))
      rmSync(join(DEMO_DIR, file));
    say(`Deleted the demo databases in ${shown(DEMO_DIR)}/`);
  }

  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(signal, () => onSignal(signal));

  sim = await startKubeSim({ https: true, scenario: 'demo', timeFactor });
  const backstageToken = sim.addToken({
    user: 'system:serviceaccount:backstage:backstage',
    rules: BACKSTAGE_RULES,
  });
  const warehouse = await startWarehouseCluster(timeFactor);
  writeFileSync(
    KUBECONFIG,
    stringifyYaml(
      mergeKubeconfigs({
        demo: sim.kubeconfig,
        warehouse: warehouse.kubeconfig,
      }),
    ),
    { mode: 0o600 },
  );

  const env = demoBackendEnv({
    stateDir: DEMO_DIR,
    kubeUrl: sim.url,
    kubeToken: backstageToken,
    kubeCa: sim.caCert ?? '',
    warehouseClient: warehouse.client,
  });
  // Other ports than app-config.yaml's: override its URLs for both processes.
  if (backendPort !== DEFAULT_BACKEND_PORT) {
    env.APP_CONFIG_backend_baseUrl = BACKEND_URL;
    env.APP_CONFIG_backend_listen_port = String(backendPort);
  }
  if (frontendPort !== DEFAULT_FRONTEND_PORT) {
    env.APP_CONFIG_app_baseUrl = FRONTEND_URL;
    env.APP_CONFIG_backend_cors_origin = FRONTEND_URL;
  }
  say(
    `Starting the pvc-pruner demo: cluster ${
      sim.url
    } (time factor ${timeFactor}), backend and frontend (logs in ${shown(
      LOG_DIR,
    )}/)…`,
  );
  backendSupervisor = Supervisor.create({
    name: 'backend',
    launch: () => launchBackend(env),
    say,
    onGiveUp: () => void stop(1),
  });
  backendSupervisor.start();
  startChild('frontend', 'plugins/pvc-pruner', env);
  watchServerProcesses();

  await Promise.all([waitForBackend(), waitForFrontend()]);
  if (stopping) return;
  ready = true;

  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const FIRST_PAGE = `${FRONTEND_URL}/catalog/default/component/orders/kubernetes`;
  const kubeconfig = shown(KUBECONFIG);
  say(
    `pvc-pruner demo ready in ${seconds} s: open ${FIRST_PAGE} (backend ${BACKEND_URL}, cluster ${sim.url})`,
  );
  say(
    `  Scale a StatefulSet and watch the card follow: kubectl --kubeconfig ${kubeconfig} -n shop scale sts orders-db --replicas=1`,
  );
  say(
    `  Pages: orders, cart, search-index (another team's), and every team's orphans at ${FRONTEND_URL}/pvc-pruner. Logs: ${shown(
      LOG_DIR,
    )}/. Ctrl-C stops everything.`,
  );
}

/** Options of {@link startDemo}. */
export interface StartDemoOptions {
  /** Default: a new temporary folder, removed by stop(). */
  stateDir?: string;
  backendPort?: number;
  frontendPort?: number;
  timeFactor?: number;
  /** Default 150 s. */
  readyTimeoutMs?: number;
  /** Start with empty databases (`--reset`); default true. false keeps those of the state folder, as a second `npm start` does. */
  reset?: boolean;
}

/** A demo started by {@link startDemo}. */
export interface RunningDemo {
  stateDir: string;
  backendUrl: string;
  frontendUrl: string;
  kubeconfig: string;
  /** The simulator: URL, admin token (also in the kubeconfig) and CA. */
  cluster: { url: string; token: string; ca: string };
  /** A request to the simulator's admin API, e.g. `simAdmin('POST', '/faults', {...})`. */
  simAdmin(method: string, path: string, body?: unknown): Promise<any>;
  /** What the start script printed so far. */
  output(): string;
  /**
   * The demo backend's processes now: the `backstage-cli package start` that
   * runs it, and the server process that CLI started (undefined while the
   * backend is down or restarting).
   */
  backendProcesses(): { cli?: number; server?: number };
  /** Stops the simulator, backend and frontend (leaving no process), and removes a temporary state folder. */
  stop(): Promise<void>;
}

/** The processes under a process (Linux /proc), deepest first. */
function descendants(pid: number): number[] {
  return (childPids(pid) ?? []).flatMap(child => [
    ...descendants(child),
    child,
  ]);
}

/** The `backstage-cli package start` of the backend among `pids` (Linux /proc): the one working in the backend's package. */
function backendCli(pids: number[]): number | undefined {
  const backendDir = join(ROOT, 'plugins/pvc-pruner-backend');
  return pids.find(pid => {
    try {
      return (
        readlinkSync(`/proc/${pid}/cwd`) === backendDir &&
        readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(CLI)
      );
    } catch {
      return false;
    }
  });
}

function killPid(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * For tests and benchmarks: runs this script (`--reset` unless told not to,
 * a state folder and ports of its own) in a child process, and resolves
 * once it is ready.
 */
export async function startDemo(
  options: StartDemoOptions = {},
): Promise<RunningDemo> {
  const temporary = !options.stateDir;
  const stateDir = resolve(
    options.stateDir ?? mkdtempSync(join(tmpdir(), 'pvc-pruner-demo-')),
  );
  const backendPort = options.backendPort ?? DEFAULT_BACKEND_PORT;
  const frontendPort = options.frontendPort ?? DEFAULT_FRONTEND_PORT;
  const readyTimeoutMs = options.readyTimeoutMs ?? 150_000;
  const env = { ...process.env };
  // A test runner's NODE_ENV=test must not reach the demo.
  delete env.NODE_ENV;
  const proc = spawn(
    process.execPath,
    [
      '--require',
      require.resolve('@backstage/cli/config/nodeTransform.cjs', {
        paths: [ROOT],
      }),
      __filename,
      ...(options.reset === false ? [] : ['--reset']),
      '--state-dir',
      stateDir,
      '--backend-port',
      String(backendPort),
      '--frontend-port',
      String(frontendPort),
      '--time-factor',
      String(options.timeFactor ?? 0.2),
    ],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  for (const stream of [proc.stdout, proc.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      output += chunk;
    });
  }
  const exited = new Promise<void>(r => proc.once('exit', () => r()));
  const running = () => proc.exitCode === null && proc.signalCode === null;
  // The last resort when the caller ends without stop(): nothing left behind.
  const killAll = () => {
    if (proc.pid === undefined) return;
    for (const pid of descendants(proc.pid)) killPid(pid, 'SIGKILL');
    killPid(proc.pid, 'SIGKILL');
  };
  process.once('exit', killAll);
  let stopped = false;
  const stopDemo = async () => {
    if (stopped) return;
    stopped = true;
    if (proc.pid !== undefined && running()) {
      const tree = descendants(proc.pid);
      // The script stops everything it started on SIGINT.
      killPid(proc.pid, 'SIGINT');
      await Promise.race([exited, sleep(STOP_TIMEOUT_MS + 10_000)]);
      if (running()) killAll();
      const deadline = Date.now() + 5000;
      const alive = (pid: number) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      while (tree.some(alive) && Date.now() < deadline) await sleep(100);
      for (const pid of tree.filter(alive)) killPid(pid, 'SIGKILL');
    }
    process.removeListener('exit', killAll);
    if (temporary) rmSync(stateDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + readyTimeoutMs;
  while (!output.includes('pvc-pruner demo ready in')) {
    if (!running() || Date.now() > deadline) {
      const why = running()
        ? `was not ready within ${readyTimeoutMs / 1000} s`
        : 'exited';
      const logs = join(stateDir, 'logs');
      const tails = existsSync(logs)
        ? readdirSync(logs).map(
            f =>
              `--- ${f}\n${readFileSync(join(logs, f), 'utf8')
                .split('\n')
                .slice(-30)
                .join('\n')}`,
          )
        : [];
      await stopDemo();
      throw new Error(`The demo ${why}:\n${output}\n${tails.join('\n')}`);
    }
    await sleep(200);
  }

  const kubeconfig = join(stateDir, 'kubeconfig');
  const config = parseYaml(readFileSync(kubeconfig, 'utf8'));
  const cluster = {
    url: String(config.clusters[0].cluster.server),
    token: String(config.users[0].user.token),
    ca: Buffer.from(
      String(config.clusters[0].cluster['certificate-authority-data']),
      'base64',
    ).toString('utf8'),
  };
  const simAdmin = (method: string, path: string, body?: unknown) =>
    new Promise<any>((resolveRequest, reject) => {
      const req = httpsRequest(
        `${cluster.url}/_sim${path}`,
        {
          method,
          ca: cluster.ca,
          headers: {
            Authorization: `Bearer ${cluster.token}`,
            'Content-Type': 'application/json',
          },
        },
        res => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', chunk => {
            text += chunk;
          });
          res.on('end', () => {
            if ((res.statusCode ?? 500) >= 300) {
              reject(
                new Error(
                  `${method} /_sim${path}: HTTP ${res.statusCode} ${text}`,
                ),
              );
            } else {
              resolveRequest(text ? JSON.parse(text) : undefined);
            }
          });
        },
      );
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });

  return {
    stateDir,
    backendUrl: `http://localhost:${backendPort}`,
    frontendUrl: `http://localhost:${frontendPort}`,
    kubeconfig,
    cluster,
    simAdmin,
    output: () => output,
    backendProcesses() {
      const cli =
        proc.pid === undefined ? undefined : backendCli(descendants(proc.pid));
      return {
        cli,
        server: cli === undefined ? undefined : childPids(cli)?.[0],
      };
    },
    stop: stopDemo,
  };
}

if (require.main === module) {
  main().catch(e => {
    say(`demo: ${e instanceof Error ? e.message : e}`);
    if (existsSync(LOG_DIR) && children.length > 0)
      say(`Logs: ${shown(LOG_DIR)}/`);
    void stop(1);
  });
}
