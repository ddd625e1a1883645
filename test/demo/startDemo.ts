/*
 * `startDemo()` runs the start script in a child process for the browser
 * tests (test/e2e) and the frontend benchmark (test/bench), with a temporary
 * state folder and ports of their own, so that they run beside a developer's
 * demo.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
} from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { childPids } from './childProcesses';
import {
  CLI,
  DEFAULT_BACKEND_PORT,
  DEFAULT_FRONTEND_PORT,
  ROOT,
  sleep,
  STOP_TIMEOUT_MS,
} from './demoRun';

/** The script `npm start` runs. */
const START_SCRIPT = join(__dirname, 'start.ts');

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
  /**
   * With recommendations-db and automatic pruning on, as `npm start` has them;
   * default false (`--no-auto-prune`), so that the orphans the tests count
   * are not pruned while they run.
   */
  autoPrune?: boolean;
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
      START_SCRIPT,
      ...(options.reset === false ? [] : ['--reset']),
      ...(options.autoPrune ? [] : ['--no-auto-prune']),
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
  const collect = (chunk: string) => {
    output += chunk;
  };
  for (const stream of [proc.stdout, proc.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', collect);
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
