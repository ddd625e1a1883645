import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer, Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { AddressInfo } from 'node:net';
import {
  ADMIN_RULES,
  AwsIdentity,
  CertificateAndKey,
  ClientCertificateSubject,
  AzureClient,
  GoogleExternalAccountCredentials,
  KubeconfigCredential,
  KubeSimAuth,
  KubeSimAuthOptions,
  OidcIssuerOptions,
  PolicyRule,
  RbacBinding,
  RequestUser,
  TokenGrant,
} from './auth';
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
import { CRDS, customResourceDefinitions } from './snapshots/crds';
import {
  SnapshotBehaviourRule,
  SnapshotBehaviours,
} from './snapshots/SnapshotBehaviours';

export type { KubeObject, StoreEvent, DeleteOptions } from './types';
export type {
  AuthenticatedUser,
  AwsIamAuthOptions,
  AwsIdentity,
  AwsRole,
  AwsRoleMapping,
  AwsUserMapping,
  AzureAuthOptions,
  AzureClient,
  CertificateAndKey,
  ClientCertificateSubject,
  GoogleExternalAccountCredentials,
  GoogleFederationOptions,
  KubeconfigCredential,
  KubeSimAuthOptions,
  OidcIssuerOptions,
  PolicyRule,
  RbacBinding,
  RbacSubject,
  TokenGrant,
} from './auth';
export {
  AKS_SCOPE,
  createCertificateAuthority,
  createTestOidcIssuer,
} from './auth';
export type { CertificateAuthority, TestOidcIssuer } from './auth';
export type { FaultRule, RequestLogEntry } from './faults';
export type { SnapshotBehaviourRule } from './snapshots/SnapshotBehaviours';
export * as snapshotNames from './snapshots/constants';
export { ObjectStore } from './store';
export { ApiHistory, historyNow } from './history';
export type {
  AutoscaledOrdinal,
  ClaimDeletion,
  ReadySnapshot,
  SnapshotRecord,
  LeaseWrite,
  PodReference,
  ReclaimPolicyChange,
  RecordedRequest,
  StatefulSetState,
  VolumeDeletion,
} from './history';
export {
  horizontalPodAutoscaler,
  manifest,
  pod,
  pvc,
  statefulSet,
} from './manifests';
export { parseScenario, loadScenario } from './scenario';
export { labelMatcher } from './selectors';

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
  /** Simulated seconds from a VolumeSnapshot's cut to readyToUse, unless a rule or annotation says otherwise (default 1). */
  snapshotReadySeconds?: number;
  /**
   * Authentication beyond bearer tokens (OIDC, AWS IAM, Google, Azure) and RBAC bindings
   * for the users they yield. x509 client certificates need no option: with `https`, the
   * server asks for one and accepts those its client CA (`clientCaCert`) signed.
   */
  auth?: KubeSimAuthOptions;
}

export interface KubeSim {
  url: string;
  /** Admin bearer token (all verbs on all resources, and /_sim). */
  token: string;
  /** PEM of the serving certificate when https is on; it is its own CA. */
  caCert?: string;
  /**
   * PEM of the client CA (https only, generated at start): a verified client certificate it
   * signed authenticates as user CN with groups O, as kube-apiserver's `--client-ca-file`.
   */
  clientCaCert?: string;
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
  /**
   * A client certificate and key signed by the client CA, for user CN=`subject.user` in
   * groups O=`subject.groups`. Throws when https is off (no TLS, no client certificates).
   */
  issueClientCertificate(subject: ClientCertificateSubject): CertificateAndKey;
  /**
   * Adds RBAC rules for users and groups, whichever method they authenticate with
   * (a RoleBinding with `namespaces`, a ClusterRoleBinding without). Returns its removal.
   */
  addBinding(binding: RbacBinding): () => void;
  /** Trusts another OIDC issuer from now on (as `auth.oidc` does at start). */
  addOidcIssuer(issuer: OidcIssuerOptions): void;
  /**
   * Judges OIDC tokens as if this much more time had passed (0 to stop):
   * a test's way to have a user's token expire at a moment it chooses.
   */
  setOidcClockOffset(ms: number): void;
  /**
   * Lets the simulated STS know another access key (e.g. session credentials of an assumed
   * role). Throws unless `auth.aws` was given.
   */
  addAwsIdentity(identity: AwsIdentity): void;
  /**
   * With `auth.google`: an `external_account` credential JSON (Workload Identity Federation) whose
   * `token_url` is this simulator's STS and whose subject token google-auth-library reads from
   * `subjectTokenFile` (an ID token of `auth.google.subjectIssuer`). Give it, as JSON, to
   * `kubernetes.googleServiceAccountCredentials`; GoogleServiceAccountStrategy's access tokens then
   * authenticate as `principal://iam.googleapis.com/projects/…/workloadIdentityPools/…/subject/<sub>`.
   */
  googleExternalAccount(
    subjectTokenFile: string,
  ): GoogleExternalAccountCredentials;
  /**
   * With `auth.azure` (https only): the authority host for AZURE_AUTHORITY_HOST, beside
   * AZURE_TENANT_ID=adfs, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET (and NODE_EXTRA_CA_CERTS
   * naming a file holding `caCert`).
   */
  azureAuthorityHost?: string;
  /**
   * With `auth.aws`: the simulated STS (`GetCallerIdentity`, `AssumeRole`) for AWS_ENDPOINT_URL_STS, so
   * AwsIamStrategy's `kubernetes.io/aws-assume-role` and Backstage's AWS credentials manager reach it.
   * The AWS SDK trusts only public CAs unless NODE_EXTRA_CA_CERTS says otherwise: use an http simulator in-process.
   */
  awsStsEndpoint?: string;
  /** Registers another Azure client (throws unless `auth.azure` was given). */
  addAzureClient(client: AzureClient): void;
  /**
   * A kubeconfig for another token (e.g. a least-privilege one) or a client certificate. `name`
   * (default `kube-sim`) names its cluster and context (its user is `<name>-admin`), so kubeconfigs
   * of several simulators can be merged; `namespace` defaults to `default`.
   */
  kubeconfigFor(
    credential: KubeconfigCredential,
    options?: { name?: string; namespace?: string },
  ): string;
  writeKubeconfig(path: string, credential?: KubeconfigCredential): void;
  addFault(rule: FaultRule): number;
  clearFaults(): void;
  /**
   * How the simulated CSI driver answers the next matching snapshots: ready after
   * `readyAfterSeconds`, or failing with `error` (first matching rule wins; `times` spends it).
   * Returns the rule's id.
   */
  addSnapshotBehaviour(rule: SnapshotBehaviourRule): number;
  removeSnapshotBehaviour(id: number): void;
  clearSnapshotBehaviours(): void;
  snapshotBehaviours(): SnapshotBehaviourRule[];
  setLatency(ms: number): void;
  dropWatches(): number;
  pauseControllers(): void;
  resumeControllers(): void;
  /** True when no controller has queued or delayed work (the cluster has settled). */
  controllersIdle(): boolean;
  /** Forget watch history, as etcd compaction does. */
  compact(): void;
  requests: Faults['requests'];
  /** Calls `listener` as each request is answered, before the next is handled (a test's trigger); returns how to stop. */
  onServed: Faults['onServed'];
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
  let url = '';
  const auth = new KubeSimAuth(
    options.auth ?? {},
    Boolean(options.https),
    () => url,
  );
  const faults = new Faults();
  const watches = new WatchRegistry();
  const history = options.recordHistory ? new ApiHistory(store) : undefined;
  const token = options.token ?? randomBytes(24).toString('hex');
  const adminGrant: TokenGrant = { user: 'kube-sim-admin', rules: ADMIN_RULES };
  auth.tokens.addToken(adminGrant, token);

  for (const name of BOOTSTRAP_NAMESPACES) {
    store.create('namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name } as KubeObject['metadata'],
    });
  }
  const snapshotBehaviours = new SnapshotBehaviours();
  for (const crd of customResourceDefinitions()) store.create(CRDS, crd);
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
            snapshotReadySeconds: options.snapshotReadySeconds,
          },
          snapshotBehaviours,
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
    authenticator: auth.authenticator,
    authorizer: auth.authorizer,
    faults,
    history,
    watches,
    settings: {
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 5000,
      defaultTimeoutSeconds: 1800,
    },
    admin: createAdminHandler(() => sim),
    isAdmin: (user: RequestUser) => user.grant === adminGrant,
    identityEndpoints: auth.endpoints,
    serverAddress: () => address,
  });
  // As kube-apiserver: ask for a client certificate, but let the request through without one.
  const server: Server = tls
    ? createHttpsServer(
        {
          key: tls.key,
          cert: tls.cert,
          ca: auth.clientCaCert,
          requestCert: true,
          rejectUnauthorized: false,
        },
        handler,
      )
    : createHttpServer(handler);
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  address = `${host}:${port}`;
  url = `${tls ? 'https' : 'http'}://${address}`;
  const kubeconfigFor = (
    credential: KubeconfigCredential,
    names: { name?: string; namespace?: string } = {},
  ) => kubeconfigYaml({ server: url, credential, caCert: tls?.cert, ...names });

  Object.assign(sim, {
    url,
    token,
    caCert: tls?.cert,
    clientCaCert: auth.clientCaCert,
    kubeconfig: kubeconfigFor(token),
    store,
    faults,
    history,
    clock,
    addToken: (grant: TokenGrant, t?: string) => auth.tokens.addToken(grant, t),
    issueClientCertificate: (subject: ClientCertificateSubject) =>
      auth.issueClientCertificate(subject),
    addBinding: (binding: RbacBinding) => auth.authorizer.addBinding(binding),
    addOidcIssuer: (issuer: OidcIssuerOptions) => auth.oidc.addIssuer(issuer),
    setOidcClockOffset: (ms: number) => {
      auth.oidc.clockOffsetMs = ms;
    },
    addAwsIdentity: (identity: AwsIdentity) => auth.addAwsIdentity(identity),
    googleExternalAccount: (file: string) => auth.googleExternalAccount(file),
    azureAuthorityHost: auth.azure ? url : undefined,
    awsStsEndpoint: auth.aws ? `${url}/aws/sts` : undefined,
    addAzureClient: (client: AzureClient) => auth.addAzureClient(client),
    kubeconfigFor,
    writeKubeconfig: (path: string, credential: KubeconfigCredential = token) =>
      writeFileSync(path, kubeconfigFor(credential), { mode: 0o600 }),
    addFault: (rule: FaultRule) => faults.add(rule),
    clearFaults: () => faults.clear(),
    addSnapshotBehaviour: (rule: SnapshotBehaviourRule) =>
      snapshotBehaviours.add(rule),
    removeSnapshotBehaviour: (id: number) => snapshotBehaviours.remove(id),
    clearSnapshotBehaviours: () => snapshotBehaviours.clear(),
    snapshotBehaviours: () => snapshotBehaviours.list(),
    setLatency: (ms: number) => {
      faults.latencyMs = ms;
    },
    dropWatches: () => watches.dropAll(),
    pauseControllers: () => controllers?.pause(),
    resumeControllers: () => controllers?.resume(),
    controllersIdle: () => controllers?.idle() ?? true,
    compact: () => store.compact(),
    requests: () => faults.requests(),
    onServed: listener => faults.onServed(listener),
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
