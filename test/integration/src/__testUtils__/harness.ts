import { execFile, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  mockCredentials,
  mockServices,
  startTestBackend,
} from '@backstage/backend-test-utils';
import {
  AuditorServiceCreateEventOptions,
  BackendFeature,
} from '@backstage/backend-plugin-api';
import { Entity } from '@backstage/catalog-model';
import { JsonObject } from '@backstage/types';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
// Integration tests run the real backend plugin, as a Backstage backend would load it.
// eslint-disable-next-line @backstage/no-mixed-plugin-imports
import pvcPrunerPlugin from 'backstage-plugin-pvc-pruner-backend';
import { TERMINAL_JOB_STATUSES } from 'backstage-plugin-pvc-pruner-common';
import type {
  OrphansResponse,
  PruneEvent,
  PruneJob,
  PruneRequest,
  ReclaimRequest,
  ReleasedVolume,
  ReleasedVolumesResponse,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import {
  KubeObject,
  KubeSim,
  KubeSimAuthOptions,
  loadScenario,
  PolicyRule,
  startKubeSim,
} from 'kube-sim';
import { parseAllDocuments } from 'yaml';

/** Real seconds per simulated second: the demo's 10 s grace periods take 0.2 s. */
export const TIME_FACTOR = 0.02;

export const ORDERS_REF = 'component:default/orders';
/** The demo scenario's shop/orders-db: 2 replicas, claims of ordinals 2–4 left behind (sorted). */
export const ORDERS_DB_ORPHANS = [
  'data-orders-db-2',
  'data-orders-db-3',
  'data-orders-db-4',
  'wal-orders-db-2',
  'wal-orders-db-3',
];
export const ALICE = 'user:default/alice';
export const BOB = 'user:default/bob';

/** A permission framework that denies alice one permission, and allows everything else. */
export function aliceDenied(permission: string) {
  const permissions = mockServices.permissions.mock();
  permissions.authorize.mockImplementation(async (requests, options) => {
    const user = (options.credentials.principal as { userEntityRef?: string })
      .userEntityRef;
    return requests.map(r => ({
      result:
        user === ALICE && r.permission.name === permission ? 'DENY' : 'ALLOW',
    })) as any;
  });
  return permissions;
}

/** The catalog entity whose StatefulSet is the demo's shop/orders-db (`backstage.io/kubernetes-id: orders`). */
export function component(
  name: string,
  kubernetesId = name,
  annotations: Record<string, string> = {},
): Entity {
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    metadata: {
      name,
      namespace: 'default',
      // As the catalog gives every entity: what tells it from one registered later under its name.
      uid: `uid-${name}`,
      annotations: {
        'backstage.io/kubernetes-id': kubernetesId,
        ...annotations,
      },
    },
    spec: { type: 'service', owner: 'team-a', lifecycle: 'production' },
  };
}

export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 15000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for ${what}${
          last ? ` (last error: ${last})` : ''
        }`,
      );
    await new Promise(r => setTimeout(r, everyMs));
  }
}

export const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** The demo scenario plus extra objects, on an https simulator (the plugin must verify its CA). */
export async function startSim(
  extra: KubeObject[] = [],
  options: {
    timeFactor?: number;
    reclaimSeconds?: number;
    auth?: KubeSimAuthOptions;
    /** Keep `sim.history` (claim deletions, snapshot timelines) for the test to judge by. */
    recordHistory?: boolean;
  } = {},
): Promise<KubeSim> {
  const sim = await startKubeSim({
    scenario: [...loadScenario('demo'), ...extra],
    timeFactor: options.timeFactor ?? TIME_FACTOR,
    reclaimSeconds: options.reclaimSeconds,
    https: true,
    auth: options.auth,
    recordHistory: options.recordHistory,
  });
  await waitForSettled(sim);
  return sim;
}

/** Every claim is Bound and every StatefulSet runs all its replicas, ready. */
export async function waitForSettled(sim: KubeSim) {
  await waitFor('the simulated cluster to settle', () => {
    const claims = sim.store.list('persistentvolumeclaims').items;
    if (claims.some(c => c.status?.phase !== 'Bound')) return false;
    return sim.store
      .list('apps/statefulsets')
      .items.every(
        s =>
          (s.status?.readyReplicas ?? 0) === (s.spec?.replicas ?? 1) &&
          (s.status?.replicas ?? 0) === (s.spec?.replicas ?? 1),
      );
  });
}

export function claimOf(sim: KubeSim, namespace: string, name: string) {
  return sim.store.get('persistentvolumeclaims', namespace, name);
}

export function volumeOf(sim: KubeSim, name: string) {
  return sim.store.get('persistentvolumes', undefined, name);
}

/** Sets spec.replicas as `kubectl scale` would (an update of the StatefulSet). */
export function scale(
  sim: KubeSim,
  namespace: string,
  name: string,
  replicas: number,
) {
  const sts = structuredClone(
    sim.store.require('apps/statefulsets', namespace, name),
  );
  sts.spec.replicas = replicas;
  return sim.store.update('apps/statefulsets', sts);
}

/** Writes (anything but get/list/watch) that reached the simulator. */
export function writesTo(sim: KubeSim) {
  return sim
    .requests()
    .filter(r => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method));
}

/**
 * Runs the installed kubectl against the simulator (its admin kubeconfig, a
 * home and discovery cache of its own) and returns its stdout; a non-zero
 * exit throws with its stderr.
 */
export async function kubectl(sim: KubeSim, args: string[]): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'pvc-pruner-kubectl-'));
  try {
    const kubeconfig = join(home, 'kubeconfig');
    sim.writeKubeconfig(kubeconfig);
    const { stdout } = await promisify(execFile)(
      'kubectl',
      ['--kubeconfig', kubeconfig, ...args],
      {
        env: { PATH: process.env.PATH, HOME: home, LANG: 'C' },
        timeout: 20000,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return stdout;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** `kubernetes.clusterLocatorMethods` exactly as a user configures a cluster with a service account token. */
export function clusterConfig(sim: KubeSim, token = sim.token, name = 'demo') {
  return {
    clusterLocatorMethods: [
      {
        type: 'config',
        clusters: [
          {
            name,
            url: sim.url,
            authProvider: 'serviceAccount',
            serviceAccountToken: token,
            caData: Buffer.from(sim.caCert!).toString('base64'),
          },
        ],
      },
    ],
  };
}

export interface Pruner {
  baseUrl: string;
  stop(): Promise<void>;
  get<T = any>(
    path: string,
    user?: string,
  ): Promise<{ status: number; body: T; text: string }>;
  post<T = any>(
    path: string,
    body: unknown,
    user?: string,
  ): Promise<{ status: number; body: T; text: string }>;
  scan(entityRef?: string): Promise<OrphansResponse>;
  /** Starts a prune or dry run of the given claims and returns its job id (asserting 202). */
  prune(request: PruneRequest, user?: string): Promise<string>;
  waitForJob(id: string, timeoutMs?: number): Promise<PruneJob>;
  events(id: string, after?: number): Promise<PruneEvent[]>;
}

/** How the plugin under test is configured. */
export interface PrunerOptions {
  /** The one cluster, unless `kubernetes` is given. */
  sim?: KubeSim;
  token?: string;
  kubernetes?: JsonObject;
  entities?: Entity[];
  pvcPruner?: JsonObject;
  database?: JsonObject;
  /** More backend features, e.g. a permissions service factory. */
  features?: BackendFeature[];
  headers?: Record<string, string>;
}

/**
 * Starts the real plugin in a test backend, configured with the simulator as
 * its one cluster (or with `kubernetes` as given). `headers` go with every
 * request, as the card sends a user's cluster tokens.
 */
export async function startPruner(options: PrunerOptions): Promise<Pruner> {
  const kubernetes =
    options.kubernetes ?? clusterConfig(options.sim!, options.token);
  const backend = await startTestBackend({
    features: [
      pvcPrunerPlugin,
      mockServices.rootConfig.factory({
        data: {
          kubernetes,
          pvcPruner: {
            leaseDurationSeconds: 5,
            volumeWaitTimeoutSeconds: 10,
            // No permission backend runs here: the permissions service (Backstage's, which allows all
            // while permission.enabled is not true, or a test's own) decides.
            allowPruneWithoutPermissionFramework: true,
            ...options.pvcPruner,
          },
          ...(options.database
            ? { backend: { database: options.database } }
            : {}),
        },
      }),
      catalogServiceMock.factory({
        entities: options.entities ?? [component('orders')],
      }),
      ...(options.features ?? []),
    ],
  });
  return prunerAt(
    `http://127.0.0.1:${backend.server.port()}/api/pvc-pruner`,
    options.headers,
    () => backend.stop(),
  );
}

/**
 * Starts the real plugin in a backend process of its own, with `env` added to
 * its environment: for what only a process's start can set, such as
 * NODE_EXTRA_CA_CERTS. Its log (debug level, audit events included) is in
 * `output()`.
 */
export async function startPrunerProcess(
  options: Omit<PrunerOptions, 'sim' | 'features'> & {
    env: Record<string, string>;
  },
): Promise<Pruner & { output(): string }> {
  const { env, ...pruner } = options;
  const child = fork(resolve(__dirname, 'prunerProcess.ts'), {
    execArgv: [
      '--require',
      require.resolve('@backstage/cli/config/nodeTransform.cjs'),
    ],
    env: {
      ...process.env,
      ...env,
      PVC_PRUNER_TEST_OPTIONS: JSON.stringify(pruner),
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  child.stdout!.on('data', chunk => (output += chunk));
  child.stderr!.on('data', chunk => (output += chunk));
  const exited = new Promise(r => child.once('exit', r));
  const baseUrl = await new Promise<string>((ready, fail) => {
    // The transform the child runs under posts messages of its own.
    child.on('message', (m: { baseUrl?: string }) => {
      if (m?.baseUrl) ready(m.baseUrl);
    });
    child.once('exit', code =>
      fail(new Error(`the plugin's process exited (${code}):\n${output}`)),
    );
  });
  const client = prunerAt(baseUrl, options.headers, async () => {
    child.kill('SIGTERM');
    await exited;
  });
  return { ...client, output: () => output };
}

/** A client of the plugin at `baseUrl`, signed in as a user, sending `headers` with every request. */
function prunerAt(
  baseUrl: string,
  headers: Record<string, string> | undefined,
  stop: () => Promise<void>,
): Pruner {
  const call = async (
    method: string,
    path: string,
    body: unknown,
    user: string,
  ) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: mockCredentials.user.header(user),
        ...headers,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: any;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed, text };
  };
  const pruner: Pruner = {
    baseUrl,
    stop,
    get: (path, user = ALICE) => call('GET', path, undefined, user),
    post: (path, body, user = ALICE) => call('POST', path, body, user),
    async scan(entityRef = ORDERS_REF) {
      const res = await pruner.get(
        `/v1/orphans?entityRef=${encodeURIComponent(entityRef)}`,
      );
      if (res.status !== 200)
        throw new Error(`scan answered ${res.status}: ${res.text}`);
      return res.body;
    },
    async prune(request, user = ALICE) {
      const res = await pruner.post('/v1/prune-jobs', request, user);
      if (res.status !== 202)
        throw new Error(`prune answered ${res.status}: ${res.text}`);
      return res.body.id;
    },
    waitForJob: (id, timeoutMs = 20000) =>
      waitFor(
        `job ${id} to finish`,
        async () => {
          const res = await pruner.get(`/v1/prune-jobs/${id}`);
          return TERMINAL_JOB_STATUSES.includes(res.body?.status)
            ? (res.body as PruneJob)
            : undefined;
        },
        timeoutMs,
        50,
      ),
    async events(id, after = 0) {
      const frames = await readSse(
        `${baseUrl}/v1/prune-jobs/${id}/events?after=${after}`,
      );
      return frames.map(f => f.data);
    },
  };
  return pruner;
}

/** The StatefulSet section of a scan (first cluster). */
export function statefulSetIn(
  scan: OrphansResponse,
  namespace: string,
  name: string,
): StatefulSetOrphans {
  const cluster = scan.clusters[0];
  if (!cluster.ok)
    throw new Error(
      `cluster ${cluster.cluster} failed: ${cluster.error.message}`,
    );
  const sts = cluster.statefulSets.find(
    s => s.namespace === namespace && s.name === name,
  );
  if (!sts) throw new Error(`no StatefulSet ${namespace}/${name} in the scan`);
  return sts;
}

/** A prune request for every orphan of a StatefulSet in a scan. */
export function pruneAll(
  sts: StatefulSetOrphans,
  dryRun = false,
  entityRef = ORDERS_REF,
  cluster = 'demo',
): PruneRequest {
  return {
    entityRef,
    cluster,
    namespace: sts.namespace,
    statefulSet: sts.name,
    pvcs: sts.orphans.map(o => ({ name: o.name, uid: o.uid })),
    dryRun,
  };
}

export interface SseFrame {
  id?: string;
  event?: string;
  data: PruneEvent;
  /** ms since the request started */
  at: number;
  /** index of the network chunk the frame ended in */
  chunk: number;
}

/**
 * Reads a text/event-stream response incrementally: each frame is parsed as
 * soon as the chunk completing it arrives, and `onFrame` sees it then.
 * Resolves with every frame when the server ends the stream.
 */
export async function readSse(
  url: string,
  options: {
    user?: string;
    onFrame?: (frame: SseFrame) => void | Promise<void>;
    onHeaders?: (res: Response) => void;
    signal?: AbortSignal;
  } = {},
): Promise<SseFrame[]> {
  const started = Date.now();
  const response = await fetch(url, {
    headers: {
      authorization: mockCredentials.user.header(options.user ?? ALICE),
      accept: 'text/event-stream',
    },
    signal: options.signal,
  });
  options.onHeaders?.(response);
  if (response.status !== 200)
    throw new Error(
      `event stream answered ${response.status}: ${await response.text()}`,
    );
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const frames: SseFrame[] = [];
  let buffer = '';
  let chunk = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunk += 1;
    buffer += decoder.decode(value, { stream: true });
    for (
      let end = buffer.indexOf('\n\n');
      end >= 0;
      end = buffer.indexOf('\n\n')
    ) {
      const raw = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields: Record<string, string> = {};
      for (const line of raw.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        if (colon < 0) continue;
        fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
      }
      if (fields.data === undefined) continue;
      const frame: SseFrame = {
        id: fields.id,
        event: fields.event,
        data: JSON.parse(fields.data),
        at: Date.now() - started,
        chunk,
      };
      frames.push(frame);
      await options.onFrame?.(frame);
    }
  }
  return frames;
}

/**
 * The ClusterRole rules of one of the plugin's RBAC manifests (default: the
 * base one; `pvc-pruner-snapshots-rbac.yaml` for snapshots), as the
 * simulator's token grants take them.
 */
export function rbacRules(manifest = 'pvc-pruner-rbac.yaml'): PolicyRule[] {
  const file = resolve(
    require.resolve('backstage-plugin-pvc-pruner-backend/package.json'),
    '..',
    'rbac',
    manifest,
  );
  const docs = parseAllDocuments(readFileSync(file, 'utf8')).map(d => d.toJS());
  const roles = docs.filter(d => d?.kind === 'ClusterRole');
  if (roles.length !== 1)
    throw new Error(
      `expected one ClusterRole in ${file}, found ${roles.length}`,
    );
  return roles[0].rules;
}

/** `verb group/resource` for each permission a set of rules grants. */
export function grantsOf(rules: PolicyRule[]): Set<string> {
  return new Set(
    rules.flatMap(r =>
      (r.apiGroups ?? ['']).flatMap(g =>
        (r.resources ?? []).flatMap(res =>
          r.verbs.map(v => `${v} ${g}/${res}`),
        ),
      ),
    ),
  );
}

/** The API group of each resource the plugin calls outside the core group. */
const GROUPS: Record<string, string> = {
  statefulsets: 'apps',
  leases: 'coordination.k8s.io',
  horizontalpodautoscalers: 'autoscaling',
  storageclasses: 'storage.k8s.io',
  volumesnapshots: 'snapshot.storage.k8s.io',
  volumesnapshotcontents: 'snapshot.storage.k8s.io',
  volumesnapshotclasses: 'snapshot.storage.k8s.io',
};

/** The permission (`verb group/resource`, as grantsOf names it) a request the simulator logged needed. */
export function permissionOf(request: { verb: string; resource?: string }) {
  return `${request.verb} ${GROUPS[request.resource ?? ''] ?? ''}/${
    request.resource
  }`;
}

/** Extra scenario objects: a StatefulSet with claims left behind, for tests that must not share the demo's. */
export function statefulSetObjects(options: {
  name: string;
  namespace: string;
  kubernetesId: string;
  replicas: number;
  orphanOrdinals?: number[];
  gracePeriodSeconds?: number;
  storageClassName?: string;
}): KubeObject[] {
  const { name, namespace, kubernetesId, replicas } = options;
  const labels = {
    'app.kubernetes.io/name': name,
    'backstage.io/kubernetes-id': kubernetesId,
  };
  const claimSpec = {
    accessModes: ['ReadWriteOnce'],
    storageClassName: options.storageClassName ?? 'standard',
    resources: { requests: { storage: '1Gi' } },
  };
  const sts = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace, labels },
    spec: {
      serviceName: name,
      replicas,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: options.gracePeriodSeconds ?? 10,
          containers: [{ name, image: `registry.example.com/${name}:1` }],
        },
      },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: claimSpec }],
    },
  };
  const orphans = (options.orphanOrdinals ?? []).map(ordinal => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: `data-${name}-${ordinal}`, namespace, labels },
    spec: claimSpec,
  }));
  return [sts, ...orphans] as unknown as KubeObject[];
}

/**
 * A scheduler for the plugin that runs nothing by itself: each task it is
 * given is kept, for the test to run when it chooses (`run(id)`).
 */
export function heldTasks() {
  const tasks = new Map<string, () => Promise<void>>();
  const scheduler = mockServices.scheduler.mock({
    scheduleTask: async task => {
      tasks.set(task.id, async () => {
        await task.fn(new AbortController().signal);
      });
    },
  });
  return {
    factory: scheduler.factory,
    async run(id: string) {
      const task = tasks.get(id);
      if (!task)
        throw new Error(
          `no task "${id}" was scheduled (${[...tasks.keys()].join(', ')})`,
        );
      await task();
    },
  };
}

/** An auditor for the plugin that keeps each event, with how it ended. */
export function keptAuditEvents() {
  const events: Array<{
    options: AuditorServiceCreateEventOptions;
    outcome?: 'success' | 'fail';
    error?: Error;
  }> = [];
  const auditor = mockServices.auditor.mock({
    createEvent: async options => {
      const event: (typeof events)[number] = { options };
      events.push(event);
      return {
        success: async () => void (event.outcome = 'success'),
        fail: async o =>
          void Object.assign(event, { outcome: 'fail', error: o.error }),
      };
    },
  });
  return { factory: auditor.factory, events };
}

/**
 * Runs `fn` with this process's wall clock (Date only) moved `ms` ahead:
 * timers and I/O run as usual. The plugin and the simulator run in this
 * process, so both see the moved clock while it runs.
 */
export async function withClockAhead<T>(
  ms: number,
  fn: () => Promise<T>,
): Promise<T> {
  jest.useFakeTimers({
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'requestAnimationFrame',
      'cancelAnimationFrame',
      'requestIdleCallback',
      'cancelIdleCallback',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
  jest.setSystemTime(Date.now() + ms);
  try {
    return await fn();
  } finally {
    jest.useRealTimers();
  }
}

/** The catalog entity of the demo's search/search-index (`backstage.io/kubernetes-id: search-index`), whose claims are on Retain volumes. */
export const SEARCH_REF = 'component:default/search';

/** An entity's Released volumes, once the plugin lists at least `count` of them. */
export async function releasedVolumesOf(
  pruner: Pruner,
  entityRef: string,
  count: number,
  user?: string,
): Promise<ReleasedVolume[]> {
  return waitFor(`${count} Released volumes of ${entityRef}`, async () => {
    const res = await pruner.get<ReleasedVolumesResponse>(
      `/v1/released-volumes?entityRef=${encodeURIComponent(entityRef)}`,
      user,
    );
    if (res.status !== 200)
      throw new Error(`released-volumes answered ${res.status}: ${res.text}`);
    return res.body.items.length >= count ? res.body.items : undefined;
  });
}

/** A reclaim request for volumes as the plugin listed them (all of one namespace's claims). */
export function reclaimRequest(
  volumes: ReleasedVolume[],
  entityRef?: string,
  more: Partial<ReclaimRequest> = {},
): ReclaimRequest {
  return {
    cluster: volumes[0].cluster,
    namespace: volumes[0].claim.namespace,
    ...(entityRef ? { entityRef } : {}),
    volumes: volumes.map(v => ({
      name: v.name,
      uid: v.uid,
      resourceVersion: v.resourceVersion,
      claimUid: v.claim.uid,
    })),
    ...more,
  };
}

/** Starts a reclaim job and returns its id (asserting 202). */
export async function reclaim(
  pruner: Pruner,
  request: ReclaimRequest,
  user?: string,
): Promise<string> {
  const res = await pruner.post<{ id: string }>(
    '/v1/reclaim-jobs',
    request,
    user,
  );
  if (res.status !== 202)
    throw new Error(`reclaim answered ${res.status}: ${res.text}`);
  return res.body.id;
}
