import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer, Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { AddressInfo } from 'node:net';
import { ADMIN_RULES, PolicyRule, TokenAuthorizer, TokenGrant } from './auth';
import { SimClock } from './clock';
import { startControllers } from './controllers';
import { Faults, FaultRule } from './faults';
import { kubeconfigYaml } from './kubeconfig';
import { WatchRegistry } from './http/watch';
import { applyScenario, loadScenario } from './scenario';
import { createRequestHandler } from './server';
import { ObjectStore } from './store';
import { generateServingCertificate } from './tls';
import { KubeObject } from './types';
import { createAdminHandler } from './admin';
import { ApiHistory } from './history';

export type { KubeObject, StoreEvent, DeleteOptions } from './types';
export type { PolicyRule, TokenGrant } from './auth';
export type { FaultRule, RequestLogEntry } from './faults';
export { ObjectStore } from './store';
export { ApiHistory, historyNow } from './history';
export type {
  ClaimDeletion,
  LeaseWrite,
  PodReference,
  RecordedRequest,
  StatefulSetState,
} from './history';
export { manifest, pvc, statefulSet } from './manifests';
export { parseScenario, loadScenario } from './scenario';

export interface KubeSimOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  https?: boolean;
  /** 'demo', 'empty' (default), a YAML file path, or objects. */
  scenario?: string | KubeObject[];
  /** Multiplies every simulated duration (grace periods, start-up, provisioning). Default 1. */
  timeFactor?: number;
  /** The admin token; random when unset. */
  token?: string;
  /** Watch events kept for replay; older versions get 410. */
  historyLimit?: number;
  bookmarkIntervalMs?: number;
  /** Record every request, claim deletion and Lease write for an oracle (`sim.history`). Default false. */
  recordHistory?: boolean;
  /** Run the controllers (default true). */
  controllers?: boolean;
  /** Simulated seconds for pod start-up, volume provisioning and reclaim. */
  podStartupSeconds?: number;
  provisioningSeconds?: number;
  reclaimSeconds?: number;
}

export interface KubeSim {
  url: string;
  /** Admin bearer token (all verbs on all resources, and /_sim). */
  token: string;
  /** PEM of the serving certificate when https is on; it is its own CA. */
  caCert?: string;
  kubeconfig: string;
  store: ObjectStore;
  faults: Faults;
  /** Set when started with `recordHistory`. */
  history?: ApiHistory;
  clock: SimClock;
  /** A token limited to these RBAC rules (in these namespaces, when given). */
  addToken(
    grant: { user: string; rules: PolicyRule[]; namespaces?: string[] },
    token?: string,
  ): string;
  /** A kubeconfig for another token (e.g. a least-privilege one). */
  kubeconfigFor(token: string): string;
  writeKubeconfig(path: string, token?: string): void;
  addFault(rule: FaultRule): number;
  clearFaults(): void;
  setLatency(ms: number): void;
  dropWatches(): number;
  pauseControllers(): void;
  resumeControllers(): void;
  /** True when no controller has queued or delayed work (the cluster has settled). */
  controllersIdle(): boolean;
  /** Forget watch history, as etcd compaction does. */
  compact(): void;
  requests: Faults['requests'];
  clearRequests(): void;
  close(): Promise<void>;
}

const BOOTSTRAP_NAMESPACES = [
  'default',
  'kube-system',
  'kube-public',
  'kube-node-lease',
];

export async function startKubeSim(
  options: KubeSimOptions = {},
): Promise<KubeSim> {
  const store = new ObjectStore({
    historyLimit: options.historyLimit ?? 10000,
  });
  const clock = new SimClock(options.timeFactor ?? 1);
  const authorizer = new TokenAuthorizer();
  const faults = new Faults();
  const watches = new WatchRegistry();
  const history = options.recordHistory ? new ApiHistory(store) : undefined;
  const token = options.token ?? randomBytes(24).toString('hex');
  const adminGrant: TokenGrant = { user: 'kube-sim-admin', rules: ADMIN_RULES };
  authorizer.addToken(adminGrant, token);

  for (const name of BOOTSTRAP_NAMESPACES) {
    store.create('namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name } as KubeObject['metadata'],
    });
  }
  const controllers =
    options.controllers === false
      ? undefined
      : startControllers({
          store,
          clock,
          options: {
            podStartupSeconds: options.podStartupSeconds,
            provisioningSeconds: options.provisioningSeconds,
            reclaimSeconds: options.reclaimSeconds,
          },
        });
  const scenario = options.scenario ?? 'empty';
  applyScenario(
    store,
    typeof scenario === 'string' ? loadScenario(scenario) : scenario,
  );

  const tls = options.https ? generateServingCertificate() : undefined;
  let address = '';
  const sim = {} as KubeSim;
  const handler = createRequestHandler({
    store,
    authorizer,
    faults,
    history,
    watches,
    settings: {
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 5000,
      defaultTimeoutSeconds: 1800,
    },
    admin: createAdminHandler(() => sim),
    isAdmin: grant => grant === adminGrant,
    serverAddress: () => address,
  });
  const server: Server = tls
    ? createHttpsServer({ key: tls.key, cert: tls.cert }, handler)
    : createHttpServer(handler);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  address = `${host}:${port}`;
  const url = `${tls ? 'https' : 'http'}://${address}`;
  const kubeconfigFor = (t: string) =>
    kubeconfigYaml({ server: url, token: t, caCert: tls?.cert });

  Object.assign(sim, {
    url,
    token,
    caCert: tls?.cert,
    kubeconfig: kubeconfigFor(token),
    store,
    faults,
    history,
    clock,
    addToken: (grant: TokenGrant, t?: string) => authorizer.addToken(grant, t),
    kubeconfigFor,
    writeKubeconfig: (path: string, t = token) =>
      writeFileSync(path, kubeconfigFor(t), { mode: 0o600 }),
    addFault: (rule: FaultRule) => faults.add(rule),
    clearFaults: () => faults.clear(),
    setLatency: (ms: number) => {
      faults.latencyMs = ms;
    },
    dropWatches: () => watches.dropAll(),
    pauseControllers: () => controllers?.pause(),
    resumeControllers: () => controllers?.resume(),
    controllersIdle: () => controllers?.idle() ?? true,
    compact: () => store.compact(),
    requests: () => faults.requests(),
    clearRequests: () => faults.clearRequests(),
    close: async () => {
      controllers?.stop();
      clock.stop();
      watches.dropAll();
      await new Promise<void>(resolve => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  } satisfies KubeSim);
  return sim;
}
