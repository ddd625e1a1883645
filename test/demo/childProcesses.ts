/*
 * The demo's child processes (the backend's and the frontend's
 * `backstage-cli package start`), each in a process group of its own: their
 * output (to .demo/logs/, and what is worth a user's eye to the terminal),
 * the watch on the backend's server process, and stopping all of it.
 */
import { ChildProcess, spawn } from 'node:child_process';
import {
  createWriteStream,
  readdirSync,
  readFileSync,
  WriteStream,
} from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import {
  CLI,
  DemoRun,
  ROOT,
  say,
  shown,
  sleep,
  STOP_TIMEOUT_MS,
} from './demoRun';

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

export interface Child {
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

export function startChild(
  run: DemoRun,
  name: string,
  packageDir: string,
  env: NodeJS.ProcessEnv,
  options: { serverProcess?: boolean; supervised?: boolean } = {},
): Child {
  // A restart appends, so the log keeps what the run before it printed.
  const log = createWriteStream(join(run.logDir, `${name}.log`), {
    flags: options.supervised && run.ready ? 'a' : 'w',
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
      if (!run.stopping && options.supervised && run.ready) {
        // The supervisor restarts it; first everything it started goes.
        signalGroup(child, 'SIGKILL');
      } else if (!run.stopping) {
        say(
          `[${name}] exited unexpectedly (${
            signal ?? `code ${code}`
          }); last lines (all in ${shown(log.path as string)}):`,
        );
        // Everything it started goes with it.
        signalGroup(child, 'SIGKILL');
        for (const line of child.tail.slice(-30)) say(`[${name}]   ${line}`);
        void stop(run, 1);
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
        let show = run.verbose;
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
  run.children.push(child);
  return child;
}

/** The child processes of a process, from /proc (Linux); undefined where that cannot be read. */
export function childPids(pid: number): number[] | undefined {
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
export function watchServerProcesses(run: DemoRun) {
  const timer = setInterval(() => {
    for (const child of run.children) {
      const server = child.serverProcess;
      if (
        !server ||
        child.exited ||
        run.stopping ||
        child.proc.pid === undefined
      )
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
      if (!run.ready) {
        say(
          `[${child.name}] the ${
            child.name
          } process exited during start-up (log: ${logPath})${
            child.tail.length ? '; its last lines:' : ''
          }`,
        );
        for (const line of child.tail.slice(-30))
          say(`[${child.name}]   ${line}`);
        void stop(run, 1);
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
export function groupAlive(child: Child) {
  if (child.proc.pid === undefined) return false;
  try {
    process.kill(-child.proc.pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function signalGroup(child: Child, signal: NodeJS.Signals) {
  if (child.proc.pid === undefined) return;
  try {
    process.kill(-child.proc.pid, signal);
  } catch {
    // already gone
  }
}

/** Stops everything the run started, then this process with `code`; a second call waits for the first. */
export async function stop(run: DemoRun, code: number): Promise<never> {
  if (run.stopping) return new Promise<never>(() => {});
  run.stopping = true;
  run.backendSupervisor?.stop();
  const { children } = run;
  const anythingStarted = children.length > 0 || run.sim !== undefined;
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
  await run.sim?.close().catch(() => {});
  await run.warehouseSim?.close().catch(() => {});
  await Promise.all(
    children.map(c => new Promise<void>(r => c.log.end(() => r()))),
  );
  if (anythingStarted) say('Demo stopped.');
  return process.exit(code);
}

/**
 * Ctrl-C (and SIGTERM, SIGHUP) stops the run; a second one kills everything
 * at once. Last resort when this process ends another way (an uncaught
 * error): leave no process behind.
 */
export function stopOnSignals(run: DemoRun) {
  process.on('exit', () => {
    for (const child of run.children) signalGroup(child, 'SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(signal, () => onSignal(run, signal));
}

function onSignal(run: DemoRun, signal: NodeJS.Signals) {
  if (run.stopping) {
    say(`${signal} again: killing everything now`);
    for (const child of run.children) signalGroup(child, 'SIGKILL');
    process.exit(130);
  }
  void stop(run, signal === 'SIGINT' ? 0 : 1);
}
