/**
 * Backend replicas: the demo backend (plugins/pvc-pruner-backend/dev/index.ts
 * with the repository's app-config.yaml), each in its own process on its own
 * loopback port, all on one PostgreSQL database, each with a cluster token of
 * its own so that the simulator knows which replica sent a request.
 */
import { ChildProcess, spawn } from 'node:child_process';
import {
  closeSync,
  createWriteStream,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  writeFileSync,
  WriteStream,
} from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
// test/demo is the repository's demo script, not a package: the campaign
// runs the same backend, with the same cluster rules and guest sign-in.
// eslint-disable-next-line @backstage/no-relative-monorepo-imports
import { demoBackendEnv, guestToken } from '../../demo/start';
import { historyNow } from 'kube-sim';
import { AUTO_PRUNE_SETTINGS, autoPruneConfig } from './autoPruneScenario';
import { SNAPSHOT_CLASS_MAP } from './cluster';
import type { ProcessFault } from './scenario';

const BACKEND_DIR = dirname(
  require.resolve('backstage-plugin-pvc-pruner-backend/package.json'),
);
const ROOT = resolve(BACKEND_DIR, '../..');
const READY_TIMEOUT_MS = 120_000;
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** What every replica is told; shorter than the demo's, so faults play out in seconds. */
export interface ReplicaSettings {
  databaseUrl: string;
  kubeUrl: string;
  kubeCa: string;
  leaseDurationSeconds: number;
  clusterRequestTimeoutSeconds: number;
  volumeWaitTimeoutSeconds: number;
  /** `pvcPruner.snapshots.timeoutSeconds`: how long a job waits for each snapshot. */
  snapshotTimeoutSeconds: number;
  workDir: string;
  /** A catalog file of the campaign's own (the scenarios' entities), loaded beside the demo's catalog. */
  catalogFile: string;
  /** `pvcPruner.autoPrune` is on (src/autoPruneScenario.ts). */
  autoPrune: boolean;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/** One backend process; restartable on the same port, token and log. */
export class Replica {
  private proc?: ChildProcess;
  private exited?: Promise<void>;
  private log?: WriteStream;
  private startedOnce = false;
  private auditOffset = 0;
  private readonly audit: AuditEvent[] = [];
  frozen = false;
  readonly url: string;
  readonly logPath: string;

  constructor(
    readonly index: number,
    readonly port: number,
    /** The simulator user this replica's requests carry. */
    readonly kubeUser: string,
    private readonly kubeToken: string,
    private readonly settings: ReplicaSettings,
  ) {
    this.url = `http://127.0.0.1:${port}`;
    this.logPath = join(settings.workDir, `replica-${index}.log`);
  }

  get pid() {
    return this.proc?.pid;
  }

  get alive() {
    return (
      this.proc !== undefined &&
      this.proc.exitCode === null &&
      this.proc.signalCode === null
    );
  }

  private writeConfig(): string {
    const path = join(this.settings.workDir, `replica-${this.index}.yaml`);
    const s = this.settings;
    writeFileSync(
      path,
      JSON.stringify({
        backend: {
          baseUrl: this.url,
          listen: { port: this.port, host: '127.0.0.1' },
          database: {
            client: 'pg',
            connection: s.databaseUrl,
            pluginDivisionMode: 'schema',
          },
        },
        // The demo's catalog, and the campaign's file instead of the demo's
        // second cluster (the campaign runs one).
        catalog: {
          locations: [
            { type: 'file', target: './dev/catalog-info.yaml' },
            { type: 'file', target: s.catalogFile },
          ],
        },
        pvcPruner: {
          leaseDurationSeconds: s.leaseDurationSeconds,
          clusterRequestTimeoutSeconds: s.clusterRequestTimeoutSeconds,
          volumeWaitTimeoutSeconds: s.volumeWaitTimeoutSeconds,
          // The undo window: on (as the demo has it), required (a claim
          // without a VolumeSnapshotClass is kept), and a short wait.
          snapshots: {
            enabled: true,
            required: true,
            timeoutSeconds: s.snapshotTimeoutSeconds,
            storageClasses: SNAPSHOT_CLASS_MAP,
          },
          ...(s.autoPrune ? { autoPrune: autoPruneConfig() } : {}),
        },
      }),
    );
    return path;
  }

  /** Starts the process; resolves when pvc-pruner answers and the guest can sign in. */
  async start(): Promise<void> {
    if (this.alive) return;
    const config = this.writeConfig();
    this.log ??= createWriteStream(this.logPath, { flags: 'a' });
    this.log.write(
      `\n=== replica ${this.index} ${
        this.startedOnce ? 'restarted' : 'started'
      } at ${new Date().toISOString()}\n`,
    );
    this.startedOnce = true;
    const env = demoBackendEnv({
      stateDir: this.settings.workDir,
      kubeUrl: this.settings.kubeUrl,
      kubeToken: this.kubeToken,
      kubeCa: this.settings.kubeCa,
    });
    const proc = spawn(
      process.execPath,
      [
        '--require',
        require.resolve('@backstage/cli/config/nodeTransform.cjs', {
          paths: [ROOT],
        }),
        'dev/index.ts',
        '--config',
        join(ROOT, 'app-config.yaml'),
        '--config',
        config,
      ],
      { cwd: BACKEND_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.proc = proc;
    this.frozen = false;
    proc.stdout!.pipe(this.log, { end: false });
    proc.stderr!.pipe(this.log, { end: false });
    this.exited = new Promise(r => proc.once('exit', () => r()));
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (!this.alive)
        throw new Error(
          `replica ${this.index} exited while starting; see ${this.logPath}`,
        );
      if (await this.ready()) {
        await this.checkAutoPruneTimeout();
        return;
      }
      await sleep(250);
    }
    throw new Error(
      `replica ${this.index} was not ready within ${
        READY_TIMEOUT_MS / 1000
      } s; see ${this.logPath}`,
    );
  }

  /**
   * The automatic task was registered with the campaign's timeout, which
   * bounds how long a killed replica's run blocks the next ones: this
   * config is merged key by key over app-config.yaml's.
   */
  private async checkAutoPruneTimeout(): Promise<void> {
    if (!this.settings.autoPrune) return;
    const wanted = `"timeoutAfterDuration":"PT${AUTO_PRUNE_SETTINGS.timeoutSeconds}S"`;
    for (let attempt = 0; attempt < 20; attempt++) {
      const registered = stripVTControlCharacters(
        readFileSync(this.logPath, 'utf8'),
      )
        .split('\n')
        .filter(l =>
          l.includes('Registered scheduled task: pvc-pruner-auto-prune'),
        )
        .pop();
      if (registered?.includes(wanted)) return;
      if (registered)
        throw new Error(
          `replica ${this.index} registered the automatic task without the campaign's ${wanted}: ${registered}`,
        );
      await sleep(100);
    }
    throw new Error(
      `replica ${this.index} did not log registering the automatic task; see ${this.logPath}`,
    );
  }

  private async ready(): Promise<boolean> {
    try {
      const health = await fetch(`${this.url}/api/pvc-pruner/health`, {
        signal: AbortSignal.timeout(2000),
      });
      return health.ok && (await guestToken(this.url)) !== undefined;
    } catch {
      return false;
    }
  }

  /** kill -9: no shutdown hook runs. */
  async kill(): Promise<void> {
    if (!this.alive) return;
    this.proc!.kill('SIGKILL');
    await this.exited;
  }

  freeze() {
    if (this.alive && !this.frozen) {
      this.proc!.kill('SIGSTOP');
      this.frozen = true;
    }
  }

  thaw() {
    if (this.alive && this.frozen) {
      this.proc!.kill('SIGCONT');
      this.frozen = false;
    }
  }

  /** Stops it for good: SIGTERM (its shutdown hooks run), SIGKILL after 10 s. */
  async stop(): Promise<void> {
    this.thaw();
    if (this.alive) {
      this.proc!.kill('SIGTERM');
      await Promise.race([this.exited, sleep(10_000)]);
      if (this.alive) this.proc!.kill('SIGKILL');
      await this.exited;
    }
    await new Promise<void>(r => (this.log ? this.log.end(() => r()) : r()));
  }

  /** Last resort, synchronous: for process.on('exit'). */
  killNow() {
    if (this.alive) {
      this.proc!.kill('SIGCONT');
      this.proc!.kill('SIGKILL');
    }
  }

  /** The audit events this replica logged so far (Backstage's auditor writes JSON lines with isAuditEvent). */
  auditEvents(): AuditEvent[] {
    let text = '';
    try {
      const fd = openSync(this.logPath, 'r');
      try {
        const size = fstatSync(fd).size;
        const chunk = Buffer.alloc(Math.max(0, size - this.auditOffset));
        readSync(fd, chunk, 0, chunk.length, this.auditOffset);
        text = chunk.toString('utf8');
      } finally {
        closeSync(fd);
      }
      const lastLine = text.lastIndexOf('\n') + 1;
      text = text.slice(0, lastLine);
      this.auditOffset += Buffer.byteLength(text);
    } catch {
      return this.audit;
    }
    for (const line of text.split('\n')) {
      const fields = auditFields(line);
      if (fields)
        this.audit.push({ ...fields, replica: this.index } as AuditEvent);
    }
    return this.audit;
  }
}

/**
 * A process fault: the replica killed (`kill -9`; restarted after a while:
 * `restarting`, not awaited here, so that the scenario follows its jobs
 * meanwhile) or stopped (SIGSTOP) and resumed, each logged; skipped when
 * the replica is down or stopped already.
 */
export async function applyProcessFault(
  replica: Replica,
  fault: ProcessFault,
  log: {
    kills: Array<{ replica: number; at: number }>;
    freezes: Array<{ replica: number; from: number; to: number }>;
  },
  count: (kind: string) => void,
): Promise<{ restarting?: Promise<void> }> {
  if (!replica.alive || replica.frozen) return {};
  if (fault.kind === 'kill-9') {
    count('process: kill -9');
    log.kills.push({ replica: replica.index, at: historyNow() });
    await replica.kill();
    return {
      restarting: sleep(fault.restartAfterMs).then(() => replica.start()),
    };
  }
  count('process: SIGSTOP');
  const from = historyNow();
  replica.freeze();
  await sleep(fault.forMs);
  replica.thaw();
  log.freezes.push({ replica: replica.index, from, to: historyNow() });
  return {};
}

export interface AuditEvent {
  replica: number;
  eventId: string;
  plugin: string;
  status: 'initiated' | 'succeeded' | 'failed';
  meta?: Record<string, any>;
  actor?: { actorId?: string };
}

/** The end of the JSON value that starts at `from` (a string, object or array), or of the bare word. */
function valueEnd(text: string, from: number): number {
  const open = text[from];
  if (open !== '{' && open !== '[' && open !== '"') {
    const space = text.indexOf(' ', from);
    return space < 0 ? text.length : space;
  }
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') {
        inString = false;
        if (depth === 0) return i + 1;
      }
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return text.length;
}

/**
 * An audit event from a line of the backend's log: a JSON line (production
 * format), or the development format `<time> <plugin> <level> <message>
 * key=<json> key=<json> …`. Undefined for any other line.
 */
export function auditFields(line: string): Record<string, unknown> | undefined {
  if (!line.includes('isAuditEvent')) return undefined;
  const text = stripVTControlCharacters(line);
  const json = text.indexOf('{"');
  if (json >= 0 && text.slice(0, json).trim() === '') {
    try {
      return JSON.parse(text.slice(json));
    } catch {
      return undefined;
    }
  }
  const fields: Record<string, unknown> = {};
  const key = / ([A-Za-z][\w]*)=/g;
  for (let match = key.exec(text); match; match = key.exec(text)) {
    const start = match.index + match[0].length;
    const end = valueEnd(text, start);
    const raw = text.slice(start, end);
    try {
      fields[match[1]] = JSON.parse(raw);
    } catch {
      fields[match[1]] = raw;
    }
    key.lastIndex = end;
  }
  return fields.isAuditEvent === true ? fields : undefined;
}
