import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeObject, KubeSim, KubeSimOptions, startKubeSim } from '../src';

export const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';

/** Substrings that kubectl prints when discovery or OpenAPI is not served as it expects. */
export const KUBECTL_DISCOVERY_WARNINGS = [
  "couldn't get",
  'Unhandled Error',
  'failed to download openapi',
  'memcache.go',
  'the server could not find the requested resource',
];

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A started simulator plus a private directory holding its kubeconfig, HOME and kubectl cache. */
export interface SimHarness {
  sim: KubeSim;
  dir: string;
  home: string;
  cacheDir: string;
  kubeconfigPath: string;
  /** Runs kubectl (no shell) against the simulator; never throws on a non-zero exit. */
  kubectl(
    args: string[],
    options?: { kubeconfig?: string; timeoutMs?: number; input?: string },
  ): Promise<KubectlResult>;
  /** Starts a long-running kubectl (e.g. `get -w`), capturing its output. */
  spawnKubectl(args: string[]): RunningProcess;
  /** Writes a file into the private directory and returns its path. */
  writeFile(name: string, content: string): string;
  /** Raw HTTP(S) request to the simulator, trusting its CA. Uses the admin token unless `token` is given (null: none). */
  http(
    method: string,
    path: string,
    options?: RawRequestOptions,
  ): Promise<RawResponse>;
  close(): Promise<void>;
}

export interface RawRequestOptions {
  token?: string | null;
  body?: string | Buffer | object;
  headers?: Record<string, string>;
  /** Reads the response only up to the headers plus what arrives within this many ms (for watches). */
  streamMs?: number;
  /** A TLS client certificate (PEM) and its key to present. */
  clientCertificate?: { cert: string; key: string };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): any;
}

export interface RunningProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
}

export function makeTempDir(prefix = 'kube-sim-test-') {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Starts a simulator (https by default, so kubectl sends the token) with a private temp dir. */
export async function startHarness(
  options: KubeSimOptions = {},
): Promise<SimHarness> {
  const sim = await startKubeSim({ https: true, ...options });
  const dir = makeTempDir();
  const home = join(dir, 'home');
  const cacheDir = join(dir, 'cache');
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, sim.kubeconfig, { mode: 0o600 });
  const harness: SimHarness = {
    sim,
    dir,
    home,
    cacheDir,
    kubeconfigPath,
    kubectl: (args, opts = {}) =>
      runKubectl(args, {
        kubeconfig: opts.kubeconfig ?? kubeconfigPath,
        home,
        cacheDir,
        timeoutMs: opts.timeoutMs,
        input: opts.input,
      }),
    spawnKubectl: args =>
      spawnProcess(
        KUBECTL,
        ['--kubeconfig', kubeconfigPath, '--cache-dir', cacheDir, ...args],
        kubectlEnv(home, kubeconfigPath),
      ),
    writeFile: (name, content) => {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
    http: (method, path, opts = {}) => rawRequest(sim, method, path, opts),
    close: async () => {
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

function kubectlEnv(home: string, kubeconfig: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    KUBECONFIG: kubeconfig,
    KUBECACHEDIR: '',
    LANG: 'C',
  };
}

export function runKubectl(
  args: string[],
  options: {
    kubeconfig: string;
    home: string;
    cacheDir: string;
    timeoutMs?: number;
    input?: string;
  },
): Promise<KubectlResult> {
  return new Promise(resolve => {
    const child = execFile(
      KUBECTL,
      [
        '--kubeconfig',
        options.kubeconfig,
        '--cache-dir',
        options.cacheDir,
        ...args,
      ],
      {
        env: kubectlEnv(options.home, options.kubeconfig),
        timeout: options.timeoutMs ?? 20000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const exitCode = (error as { code?: unknown } | null)?.code;
        let code = 0;
        if (error) code = typeof exitCode === 'number' ? exitCode : -1;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

export function spawnProcess(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): RunningProcess {
  const child = spawn(command, args, {
    env,
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', d => {
    out += d;
  });
  child.stderr!.on('data', d => {
    err += d;
  });
  const exited = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
  }>(resolve => {
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    kill: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null)
        child.kill(signal);
    },
  };
}

/** Asserts that kubectl's stderr holds no discovery/OpenAPI complaints. */
export function expectNoDiscoveryWarnings(stderr: string) {
  for (const warning of KUBECTL_DISCOVERY_WARNINGS) {
    expect({ warning, stderr, found: stderr.includes(warning) }).toEqual({
      warning,
      stderr,
      found: false,
    });
  }
}

/** Raw request with the admin token (or another, or none), trusting the simulator's CA. */
export function rawRequest(
  sim: Pick<KubeSim, 'url' | 'token' | 'caCert'>,
  method: string,
  path: string,
  options: RawRequestOptions = {},
): Promise<RawResponse> {
  const url = new URL(path, sim.url);
  const token = options.token === undefined ? sim.token : options.token;
  const headers: Record<string, string> = {
    Accept: 'application/json',
    ...(token !== null ? { Authorization: `Bearer ${token}` } : {}),
  };
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    payload = Buffer.isBuffer(options.body)
      ? options.body
      : Buffer.from(
          typeof options.body === 'string'
            ? options.body
            : JSON.stringify(options.body),
        );
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = String(payload.length);
  }
  Object.assign(headers, options.headers ?? {});
  const doRequest = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = doRequest(
      url,
      {
        method,
        headers,
        ...(url.protocol === 'https:' ? { ca: sim.caCert } : {}),
        ...(options.clientCertificate ?? {}),
        agent: false,
      },
      res => {
        const chunks: Buffer[] = [];
        let finished = false;
        const finish = () => {
          if (finished) return;
          finished = true;
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: () => JSON.parse(text),
          });
        };
        res.on('data', c => chunks.push(c));
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
        if (options.streamMs !== undefined) {
          setTimeout(() => {
            finish();
            req.destroy();
          }, options.streamMs);
        }
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

export const sleep = (ms: number) =>
  new Promise(resolve => setTimeout(resolve, ms));

/** Polls until fn returns a truthy value (or stops throwing); returns that value. */
export async function eventually<T>(
  fn: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<T> {
  const timeout = options.timeoutMs ?? 10000;
  const interval = options.intervalMs ?? 25;
  const deadline = Date.now() + timeout;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
      lastError = undefined;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      const why =
        lastError instanceof Error
          ? lastError.message
          : 'condition stayed false';
      throw new Error(
        `${
          options.message ?? 'eventually'
        } timed out after ${timeout} ms: ${why}`,
      );
    }
    await sleep(interval);
  }
}

/** Asserts fn stays truthy for the whole period. */
export async function consistently(
  fn: () => boolean,
  ms: number,
  message = 'condition',
) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!fn()) throw new Error(`${message} stopped holding`);
    await sleep(20);
  }
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A minimal valid PVC. */
export function pvc(
  name: string,
  ns = 'default',
  extra: {
    labels?: Record<string, string>;
    storageClassName?: string;
    finalizers?: string[];
  } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace: ns,
      ...(extra.labels ? { labels: extra.labels } : {}),
      ...(extra.finalizers ? { finalizers: extra.finalizers } : {}),
    } as KubeObject['metadata'],
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      ...(extra.storageClassName
        ? { storageClassName: extra.storageClassName }
        : {}),
    },
  };
}

/** A StatefulSet with one `data` volumeClaimTemplate. */
export function statefulSet(
  name: string,
  ns = 'default',
  options: {
    replicas?: number;
    storageClassName?: string;
    podManagementPolicy?: string;
    terminationGracePeriodSeconds?: number;
  } = {},
): KubeObject {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name,
      namespace: ns,
      labels,
    } as unknown as KubeObject['metadata'],
    spec: {
      serviceName: name,
      replicas: options.replicas ?? 1,
      podManagementPolicy: options.podManagementPolicy ?? 'Parallel',
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds:
            options.terminationGracePeriodSeconds ?? 10,
          containers: [{ name: 'main', image: 'registry.example.com/app:1' }],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '1Gi' } },
            ...(options.storageClassName
              ? { storageClassName: options.storageClassName }
              : {}),
          },
        },
      ],
    },
  };
}

export function namespace(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name } as KubeObject['metadata'],
  };
}

/** Removes every finalizer of an object through the store (as a controller would). */
export function releaseFinalizers(
  sim: KubeSim,
  resource: string,
  ns: string | undefined,
  name: string,
) {
  const current = sim.store.get(resource, ns, name);
  if (!current) return;
  sim.store.update(resource, {
    ...current,
    metadata: { ...current.metadata, finalizers: [] },
  });
}
