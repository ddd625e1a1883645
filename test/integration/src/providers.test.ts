import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBackendModule } from '@backstage/backend-plugin-api';
import { mockServices } from '@backstage/backend-test-utils';
import type { AuthenticationStrategy } from '@backstage/plugin-kubernetes-node';
import { ConfigReader } from '@backstage/config';
import { AwsIamStrategy } from '@backstage/plugin-kubernetes-backend';
import { JsonObject } from '@backstage/types';
import type { FleetResponse } from 'backstage-plugin-pvc-pruner-common';
// The plugin's extension point, as a module adding a custom strategy uses it.
// eslint-disable-next-line @backstage/no-mixed-plugin-imports
import { pvcPrunerAuthStrategyExtensionPoint } from 'backstage-plugin-pvc-pruner-backend';
import { exportJWK, SignJWT } from 'jose';
import { CertificateAndKey, KubeObject, KubeSim, startKubeSim } from 'kube-sim';
import {
  claimOf,
  component,
  pruneAll,
  rbacRules,
  startPruner,
  startPrunerProcess,
  startSim,
  statefulSetIn,
  statefulSetObjects,
  TIME_FACTOR,
  waitFor,
  waitForSettled,
} from './__testUtils__/harness';

jest.setTimeout(60000);

/*
 * One simulator that authenticates each method as kube-apiserver does, and
 * the real plugin reaching it with each auth provider: a scan, a real prune,
 * and a cluster that refuses. Nothing a credential is made of may show up in
 * a response, an event, a log line, an audit record or a database row.
 */

const ISSUER = 'https://idp.example.com/realms/platform';
const OIDC_CLIENT = 'backstage';
const AWS_CLUSTER = 'shop-eks';
const ACCOUNT = '111122223333';
const AWS_KEY = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
const AWS_STRANGER_KEY = {
  accessKeyId: 'AKIASTRANGEREXAMPLE1',
  secretAccessKey: 'stranger/secret/K7MDENGbPxRfiCYEXAMPLEKEY',
};
const PRUNERS = 'pvc-pruners';
const AKS_SCOPE = '6dae42f8-4368-4678-94ff-3960e28e3630/.default';
const AKS_USER = {
  clientId: '0f6a3c1e-aks-user',
  clientSecret: 'aks-user-secret-EXAMPLE',
  username: 'alice@contoso.com',
  groups: [PRUNERS],
};
const AKS_STRANGER = {
  clientId: '7c1d9e2a-aks-stranger',
  clientSecret: 'aks-stranger-secret-EXAMPLE',
  username: 'mallory@contoso.com',
};
/** The plugin's own Entra application, for `authProvider: azure`. */
const AZURE_PLUGIN = {
  clientId: '3b7e0d4f-pvc-pruner',
  clientSecret: 'azure-plugin-secret-EXAMPLE',
  username: 'pvc-pruner-aks',
  groups: [PRUNERS],
};
const AZURE_STRANGER = {
  clientId: '9a2c4e6b-stranger',
  clientSecret: 'azure-stranger-secret-EXAMPLE',
  username: 'stranger-aks',
};
const idp = generateKeyPairSync('rsa', { modulusLength: 2048 });

let sim: KubeSim;

function idToken(email: string, groups: string[], expiresInSeconds = 300) {
  return new SignJWT({ email, email_verified: true, groups })
    .setProtectedHeader({ alg: 'RS256', kid: 'idp-1' })
    .setIssuer(ISSUER)
    .setAudience(OIDC_CLIENT)
    .setSubject(email)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + expiresInSeconds)
    .sign(idp.privateKey);
}

/** A strategy handing out one client certificate, as a custom (or Pinniped) strategy returns x509 credentials. */
class ClientCertificateStrategy implements AuthenticationStrategy {
  constructor(private readonly certificate: CertificateAndKey) {}
  async getCredential() {
    return {
      type: 'x509 client certificate' as const,
      ...this.certificate,
    };
  }
  validateCluster() {
    return [];
  }
  presentAuthMetadata() {
    return {};
  }
}

function x509Module(certificate: CertificateAndKey) {
  return createBackendModule({
    pluginId: 'pvc-pruner',
    moduleId: 'x509-client-certificate',
    register(env) {
      env.registerInit({
        deps: { strategies: pvcPrunerAuthStrategyExtensionPoint },
        async init({ strategies }) {
          strategies.addAuthStrategy(
            'x509',
            new ClientCertificateStrategy(certificate),
          );
        },
      });
    },
  });
}

/** How a platform team configures a cluster for each provider, as for the Kubernetes backend. */
interface ProviderSetup {
  /** The Kubernetes user the simulator authenticates the plugin's requests as. */
  user: string;
  cluster: JsonObject;
  features?: any[];
  headers?: Record<string, string>;
  /**
   * Runs the plugin in a process of its own with this environment, for what
   * only a process's start can set.
   */
  processEnv?: Record<string, string>;
  /** A cluster locator in place of the `config` one with `cluster`. */
  locator?: JsonObject;
  /** Stops what the setup started. */
  stop?: () => Promise<void>;
  /** What the credentials are made of: none may leak. */
  secrets: string[];
}

interface Provider {
  name: string;
  /** Credentials the simulator maps to a user with the plugin's RBAC. */
  allowed(): Promise<ProviderSetup>;
  /** Credentials of a user the cluster's RBAC grants nothing. */
  refused(): Promise<ProviderSetup>;
}

const PROVIDERS: Provider[] = [
  {
    name: 'serviceAccount',
    async allowed() {
      const user = 'system:serviceaccount:backstage:pvc-pruner';
      const token = sim.addToken({ user, rules: rbacRules() });
      return {
        user,
        cluster: { authProvider: 'serviceAccount', serviceAccountToken: token },
        secrets: [token],
      };
    },
    async refused() {
      const user = 'system:serviceaccount:backstage:nobody';
      const token = sim.addToken({ user, rules: [] });
      return {
        user,
        cluster: { authProvider: 'serviceAccount', serviceAccountToken: token },
        secrets: [token],
      };
    },
  },
  {
    name: 'x509',
    async allowed() {
      const certificate = sim.issueClientCertificate({
        user: 'pvc-pruner',
        groups: [PRUNERS],
      });
      return {
        user: 'pvc-pruner',
        cluster: { authProvider: 'x509' },
        features: [x509Module(certificate)],
        secrets: [certificate.key, 'PRIVATE KEY'],
      };
    },
    async refused() {
      const certificate = sim.issueClientCertificate({ user: 'nobody' });
      return {
        user: 'nobody',
        cluster: { authProvider: 'x509' },
        features: [x509Module(certificate)],
        secrets: [certificate.key, 'PRIVATE KEY'],
      };
    },
  },
  {
    name: 'oidc',
    async allowed() {
      const token = await idToken('alice@example.com', [PRUNERS]);
      return {
        user: 'alice@example.com',
        cluster: { authProvider: 'oidc', oidcTokenProvider: 'okta' },
        headers: { 'Backstage-Kubernetes-Authorization-oidc-okta': token },
        secrets: [token, token.split('.')[2]],
      };
    },
    async refused() {
      const token = await idToken('bob@example.com', []);
      return {
        user: 'bob@example.com',
        cluster: { authProvider: 'oidc', oidcTokenProvider: 'okta' },
        headers: { 'Backstage-Kubernetes-Authorization-oidc-okta': token },
        secrets: [token, token.split('.')[2]],
      };
    },
  },
  {
    name: 'aks',
    async allowed() {
      const token = await aksToken(AKS_USER);
      return {
        user: AKS_USER.username,
        cluster: { authProvider: 'aks' },
        headers: { 'Backstage-Kubernetes-Authorization-aks': token },
        secrets: [token, AKS_USER.clientSecret],
      };
    },
    async refused() {
      const token = await aksToken(AKS_STRANGER);
      return {
        user: AKS_STRANGER.username,
        cluster: { authProvider: 'aks' },
        headers: { 'Backstage-Kubernetes-Authorization-aks': token },
        secrets: [token, AKS_STRANGER.clientSecret],
      };
    },
  },
  {
    name: 'azure',
    allowed: async () => azureSetup(AZURE_PLUGIN),
    refused: async () => azureSetup(AZURE_STRANGER),
  },
  {
    name: 'localKubectlProxy',
    allowed: () => throughKubectlProxy('pvc-pruner-proxy', rbacRules()),
    refused: () => throughKubectlProxy('nobody-proxy', []),
  },
  {
    name: 'aws',
    async allowed() {
      process.env.AWS_ACCESS_KEY_ID = AWS_KEY.accessKeyId;
      process.env.AWS_SECRET_ACCESS_KEY = AWS_KEY.secretAccessKey;
      return {
        user: 'backstage',
        cluster: { authProvider: 'aws' },
        secrets: [AWS_KEY.secretAccessKey, 'k8s-aws-v1.', 'X-Amz-Signature'],
      };
    },
    async refused() {
      process.env.AWS_ACCESS_KEY_ID = AWS_STRANGER_KEY.accessKeyId;
      process.env.AWS_SECRET_ACCESS_KEY = AWS_STRANGER_KEY.secretAccessKey;
      return {
        user: 'stranger',
        cluster: { authProvider: 'aws' },
        secrets: [
          AWS_STRANGER_KEY.secretAccessKey,
          'k8s-aws-v1.',
          'X-Amz-Signature',
        ],
      };
    },
  },
];

/**
 * `authProvider: azure` as on AKS: the plugin's own application, through
 * DefaultAzureCredential's environment variables. @azure/identity trusts the
 * simulator's https authority only through NODE_EXTRA_CA_CERTS, which Node
 * reads when a process starts, so the plugin runs in a process of its own.
 */
function azureSetup(client: {
  clientId: string;
  clientSecret: string;
  username: string;
}): ProviderSetup {
  const caFile = join(mkdtempSync(join(tmpdir(), 'azure-ca-')), 'ca.pem');
  writeFileSync(caFile, sim.caCert!);
  return {
    user: client.username,
    cluster: { authProvider: 'azure' },
    processEnv: {
      NODE_EXTRA_CA_CERTS: caFile,
      AZURE_TENANT_ID: 'adfs',
      AZURE_AUTHORITY_HOST: sim.azureAuthorityHost!,
      AZURE_CLIENT_ID: client.clientId,
      AZURE_CLIENT_SECRET: client.clientSecret,
    },
    secrets: [client.clientSecret, 'aks-sim.'],
  };
}

/**
 * `type: localKubectlProxy`: a real `kubectl proxy` on port 8001 (the port
 * upstream's locator uses), authenticating to the simulator with a token of
 * `user`; the plugin sends no credentials at all.
 */
async function throughKubectlProxy(
  user: string,
  rules: ReturnType<typeof rbacRules>,
): Promise<ProviderSetup> {
  const token = sim.addToken({ user, rules });
  const directory = mkdtempSync(join(tmpdir(), 'kubectl-proxy-'));
  const kubeconfig = join(directory, 'kubeconfig');
  writeFileSync(kubeconfig, sim.kubeconfigFor(token), { mode: 0o600 });
  const proxy = spawn(
    'kubectl',
    ['proxy', '--port=8001', `--kubeconfig=${kubeconfig}`],
    { env: { PATH: process.env.PATH, HOME: directory } },
  );
  let output = '';
  await new Promise<void>((ready, fail) => {
    const read = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('Starting to serve on')) ready();
    };
    proxy.stdout.on('data', read);
    proxy.stderr.on('data', read);
    proxy.once('exit', code =>
      fail(new Error(`kubectl proxy exited (${code}): ${output}`)),
    );
  });
  const exited = new Promise(r => proxy.once('exit', r));
  return {
    user,
    cluster: {},
    locator: { type: 'localKubectlProxy' },
    secrets: [token],
    async stop() {
      proxy.kill();
      await exited;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

const appOf = (provider: string) => `app-${provider.toLowerCase()}`;
const dbOf = (provider: string) => `db-${provider.toLowerCase()}`;
/** The cluster name: for aws the EKS cluster id the token is signed for. */
const clusterNameOf = (provider: string) => {
  if (provider === 'aws') return AWS_CLUSTER;
  // The one cluster of `type: localKubectlProxy`, as upstream names it.
  if (provider === 'localKubectlProxy') return 'local';
  return `${provider.toLowerCase()}-cluster`;
};

/** Records every audit event, as the auditor sees it. */
function recordingAuditor() {
  const records: unknown[] = [];
  const auditor = mockServices.auditor.mock({
    createEvent: async options => {
      const record: Record<string, unknown> = { meta: options.meta };
      records.push(record);
      return {
        success: async o => void Object.assign(record, { success: o?.meta }),
        fail: async o =>
          void Object.assign(record, {
            fail: o.meta,
            error: `${o.error.message} ${o.error.stack}`,
          }),
      };
    },
  });
  return { auditor, records };
}

/**
 * The plugin's SQLite database files as text: every row (and any page a
 * deleted row left behind) is in them as written.
 */
function databaseFiles(directory: string) {
  return readdirSync(directory)
    .map(file => readFileSync(join(directory, file)).toString('utf8'))
    .join('\n');
}

/** The plugin, reaching the simulator as `setup` says, with everything it says and stores recorded. */
async function startWith(
  provider: string,
  setup: ProviderSetup,
  on: { sim: KubeSim; kubernetes?: JsonObject } = { sim },
) {
  const { auditor, records } = recordingAuditor();
  const logger = mockServices.logger.mock();
  const directory = mkdtempSync(join(tmpdir(), 'pvc-pruner-db-'));
  const options = {
    kubernetes: {
      ...on.kubernetes,
      clusterLocatorMethods: [
        setup.locator ?? {
          type: 'config',
          clusters: [
            {
              name: clusterNameOf(provider),
              url: on.sim.url,
              ...(on.sim.caCert
                ? { caData: Buffer.from(on.sim.caCert).toString('base64') }
                : {}),
              ...setup.cluster,
            },
          ],
        },
      ],
    },
    entities: PROVIDERS.map(p => component(appOf(p.name))).concat(
      component('app-oidc-expiry'),
      component('app-oidc-fleet'),
      component('app-aws-expiry'),
      component('app-googleserviceaccount'),
      component('app-google'),
    ),
    headers: setup.headers,
    database: { client: 'better-sqlite3', connection: { directory } },
  };
  const inOwnProcess = setup.processEnv
    ? await startPrunerProcess({ ...options, env: setup.processEnv })
    : undefined;
  const pruner =
    inOwnProcess ??
    (await startPruner({
      ...options,
      sim: on.sim,
      features: [...(setup.features ?? []), auditor.factory, logger.factory],
    }));
  const texts: string[] = [];
  const recorded = () => [
    ...texts,
    JSON.stringify(records),
    JSON.stringify(
      ['debug', 'info', 'warn', 'error'].flatMap(level =>
        (logger as any)[level].mock.calls.map((args: unknown[]) =>
          args.map(a => (a instanceof Error ? `${a.message} ${a.stack}` : a)),
        ),
      ),
    ),
    databaseFiles(directory),
    inOwnProcess?.output() ?? '',
  ];
  return {
    pruner,
    texts,
    /** Asserts that no part of a credential was said or stored anywhere. */
    expectNoLeak(secrets: string[]) {
      const everything = recorded().join('\n');
      for (const secret of secrets) expect(everything).not.toContain(secret);
    },
    async stop() {
      await pruner.stop();
      await setup.stop?.();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

beforeAll(async () => {
  sim = await startSim(
    [
      ...PROVIDERS.flatMap(p =>
        statefulSetObjects({
          name: dbOf(p.name),
          namespace: 'shop',
          kubernetesId: appOf(p.name),
          replicas: 1,
          orphanOrdinals: [1, 2],
        }),
      ),
      ...statefulSetObjects({
        name: 'db-oidc-fleet',
        namespace: 'shop',
        kubernetesId: 'app-oidc-fleet',
        replicas: 1,
        orphanOrdinals: [1, 2, 3],
      }),
      ...statefulSetObjects({
        name: 'db-oidc-expiry',
        namespace: 'shop',
        kubernetesId: 'app-oidc-expiry',
        replicas: 1,
        orphanOrdinals: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
      }),
      ...statefulSetObjects({
        name: 'db-aws-expiry',
        namespace: 'shop',
        kubernetesId: 'app-aws-expiry',
        replicas: 1,
        orphanOrdinals: [1, 2, 3, 4, 5, 6],
      }),
    ],
    {
      auth: {
        oidc: [
          {
            issuer: ISSUER,
            audiences: [OIDC_CLIENT],
            keys: {
              keys: [
                {
                  ...(await exportJWK(idp.publicKey)),
                  kid: 'idp-1',
                  alg: 'RS256',
                },
              ],
            },
            usernameClaim: 'email',
            groupsClaim: 'groups',
          },
        ],
        aws: {
          clusterId: AWS_CLUSTER,
          identities: [
            { ...AWS_KEY, arn: `arn:aws:iam::${ACCOUNT}:user/backstage` },
            {
              ...AWS_STRANGER_KEY,
              arn: `arn:aws:iam::${ACCOUNT}:user/stranger`,
            },
          ],
          mapUsers: [
            {
              userarn: `arn:aws:iam::${ACCOUNT}:user/backstage`,
              username: 'backstage',
              groups: [PRUNERS],
            },
            {
              userarn: `arn:aws:iam::${ACCOUNT}:user/stranger`,
              username: 'stranger',
            },
          ],
        },
        azure: {
          clients: [AKS_USER, AKS_STRANGER, AZURE_PLUGIN, AZURE_STRANGER],
        },
        bindings: [
          { subjects: [{ kind: 'Group', name: PRUNERS }], rules: rbacRules() },
        ],
      },
    },
  );
});

afterAll(async () => {
  await sim?.close();
  delete process.env.AWS_ACCESS_KEY_ID;
  delete process.env.AWS_SECRET_ACCESS_KEY;
});

describe.each(PROVIDERS.map(p => [p.name, p] as const))(
  'authProvider %s',
  (name, provider) => {
    it('scans and really prunes as the user the cluster authenticates, and no credential leaks', async () => {
      const setup = await provider.allowed();
      const run = await startWith(name, setup);
      try {
        sim.clearRequests();
        const scan = await run.pruner.scan(`component:default/${appOf(name)}`);
        run.texts.push(JSON.stringify(scan));
        const sts = statefulSetIn(scan, 'shop', dbOf(name));
        expect(sts.orphans.map(o => o.name)).toEqual([
          `data-${dbOf(name)}-1`,
          `data-${dbOf(name)}-2`,
        ]);

        const id = await run.pruner.prune(
          pruneAll(
            sts,
            false,
            `component:default/${appOf(name)}`,
            clusterNameOf(name),
          ),
        );
        const job = await run.pruner.waitForJob(id);
        run.texts.push(
          JSON.stringify(job),
          JSON.stringify(await run.pruner.events(id)),
        );

        expect(job.status).toBe('succeeded');
        expect(job.summary.deleted.map(d => d.name)).toEqual([
          `data-${dbOf(name)}-1`,
          `data-${dbOf(name)}-2`,
        ]);
        await waitFor('the claims to be gone', () =>
          [1, 2].every(o => !claimOf(sim, 'shop', `data-${dbOf(name)}-${o}`)),
        );
        const deletes = sim
          .requests()
          .filter(
            r =>
              r.method === 'DELETE' && r.resource === 'persistentvolumeclaims',
          );
        expect(deletes.map(r => [r.user, r.status])).toEqual([
          [setup.user, 202],
          [setup.user, 202],
        ]);
        run.expectNoLeak(setup.secrets);
      } finally {
        await run.stop();
      }
    });

    it('reports what a cluster refuses (403), naming the verb and resource, and no credential leaks', async () => {
      const setup = await provider.refused();
      const run = await startWith(name, setup);
      try {
        const scan = await run.pruner.scan(`component:default/${appOf(name)}`);
        run.texts.push(JSON.stringify(scan));
        expect(scan.clusters).toEqual([
          {
            cluster: clusterNameOf(name),
            ok: false,
            error: {
              name: 'ClusterRequestError',
              statusCode: 403,
              message: `cluster "${clusterNameOf(
                name,
              )}" refused list statefulsets: 403 Forbidden (statefulsets.apps is forbidden: User "${
                setup.user
              }" cannot list resource "statefulsets" in API group "apps" at the cluster scope)`,
            },
          },
        ]);

        const refused = await run.pruner.post('/v1/prune-jobs', {
          entityRef: `component:default/${appOf(name)}`,
          cluster: clusterNameOf(name),
          namespace: 'shop',
          statefulSet: dbOf(name),
          pvcs: [{ name: `data-${dbOf(name)}-1`, uid: 'x' }],
        });
        run.texts.push(refused.text);
        expect(refused.status).toBe(503);
        expect(refused.body.error).toEqual({
          name: 'ServiceUnavailableError',
          message: `cluster "${clusterNameOf(
            name,
          )}" refused list statefulsets: 403 Forbidden (statefulsets.apps is forbidden: User "${
            setup.user
          }" cannot list resource "statefulsets" in API group "apps" in the namespace "shop")`,
        });
        run.expectNoLeak(setup.secrets);
      } finally {
        await run.stop();
      }
    });
  },
);

/** POSTs an OAuth form to one of the simulator's identity endpoints; resolves with its access_token. */
function accessToken(
  url: string,
  form: Record<string, string>,
  ca?: string,
): Promise<string> {
  const body = new URLSearchParams(form).toString();
  const send = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      {
        method: 'POST',
        ca,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
      res => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', chunk => {
          text += chunk;
        });
        res.on('end', () => {
          const parsed = JSON.parse(text);
          if (parsed.access_token) resolve(parsed.access_token);
          else reject(new Error(`${url}: ${res.statusCode} ${text}`));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** An AKS-scoped Entra access token, as the user's Microsoft sign-in would hold one (here: the simulator's authority). */
function aksToken(client: { clientId: string; clientSecret: string }) {
  return accessToken(
    `${sim.azureAuthorityHost}/adfs/oauth2/token`,
    {
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      scope: AKS_SCOPE,
    },
    sim.caCert,
  );
}

/**
 * Sets this process's Date `offsetMs` off the real time, exactly, until the
 * returned function restores it. (Jest's fake timers advance by fixed ticks
 * of a real interval, which a loaded machine delays, so their clock drifts.)
 */
function shiftClock(offsetMs: number): () => void {
  const RealDate = Date;
  class ShiftedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + offsetMs);
      else super(...(args as [string]));
    }
    static now() {
      return RealDate.now() + offsetMs;
    }
  }
  globalThis.Date = ShiftedDate as DateConstructor;
  return () => {
    globalThis.Date = RealDate;
  };
}

/** GETs a path of the simulator with a bearer token, as any client would; resolves with the status. */
function getWithToken(path: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${sim.url}${path}`,
      { ca: sim.caCert, headers: { authorization: `Bearer ${token}` } },
      res => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('expiring credentials', () => {
  afterEach(() => {
    sim.setLatency(0);
    jest.useRealTimers();
  });

  it('ends a job whose OIDC user token expires mid-job, with a reason that says so, and deletes nothing after', async () => {
    const scanToken = await idToken('alice@example.com', [PRUNERS]);
    const headers = {
      'Backstage-Kubernetes-Authorization-oidc-okta': scanToken,
    };
    const run = await startWith('oidc', {
      user: 'alice@example.com',
      cluster: { authProvider: 'oidc', oidcTokenProvider: 'okta' },
      headers,
      secrets: [scanToken],
    });
    let stopListening = () => {};
    try {
      const sts = statefulSetIn(
        await run.pruner.scan('component:default/app-oidc-expiry'),
        'shop',
        'db-oidc-expiry',
      );
      expect(sts.orphans).toHaveLength(12);
      const token = await idToken('alice@example.com', [PRUNERS], 60);
      headers['Backstage-Kubernetes-Authorization-oidc-okta'] = token;
      // Deletes are slow, so the job's first check is over a second old when
      // a slot frees for a ninth: the rest wait for a second check. The token
      // expires (the cluster judges tokens two hours on) as the first delete
      // is answered: after the first batch's deletes went out, before the
      // second check's reads.
      sim.addFault({
        verb: 'delete',
        resource: 'persistentvolumeclaims',
        latencyMs: 1200,
      });
      stopListening = sim.onServed(entry => {
        if (
          entry.method === 'DELETE' &&
          entry.resource === 'persistentvolumeclaims' &&
          entry.status < 300
        ) {
          stopListening();
          sim.setOidcClockOffset(2 * 60 * 60 * 1000);
        }
      });

      const id = await run.pruner.prune(
        pruneAll(
          sts,
          false,
          'component:default/app-oidc-expiry',
          clusterNameOf('oidc'),
        ),
      );
      const job = await run.pruner.waitForJob(id, 30000);
      const events = await run.pruner.events(id);
      run.texts.push(JSON.stringify(job), JSON.stringify(events));

      expect(job.status).toBe('aborted');
      expect(job.reason).toMatch(
        /^your oidc token for cluster "oidc-cluster" expired or was refused \(401 on [a-z0-9 /.-]+\); sign in again and re-run$/,
      );
      // The first batch's deletes went out on the valid token; the rest were not attempted.
      const sentOnTheToken =
        job.summary.deleted.length + job.summary.terminating.length;
      expect(sentOnTheToken).toBe(8);
      const notAttempted = job.summary.skipped.filter(s =>
        s.reason?.startsWith(
          'not attempted: the job stopped because your oidc token',
        ),
      );
      expect(notAttempted).toHaveLength(4);
      expect(job.summary.failed).toEqual([]);
      expect(events.at(-1)).toMatchObject({
        type: 'job-finished',
        status: 'aborted',
      });
      // The cluster refused the expired token; no delete sent after that
      // answer went through. (The log is in order of answers; a request was
      // sent its duration before.)
      const log = sim.requests();
      const sentAt = (r: (typeof log)[number]) =>
        Date.parse(r.time) - r.durationMs;
      const firstRefusal = log.find(r => r.status === 401);
      expect(firstRefusal).toBeDefined();
      expect(
        log.filter(
          r =>
            r.method === 'DELETE' &&
            r.status < 300 &&
            sentAt(r) > Date.parse(firstRefusal!.time),
        ),
      ).toEqual([]);
      run.expectNoLeak([
        token,
        token.split('.')[2],
        scanToken,
        scanToken.split('.')[2],
      ]);
    } finally {
      stopListening();
      sim.setOidcClockOffset(0);
      sim.clearFaults();
      await run.stop();
    }
  });

  it('keeps a job going when its AWS tokens expire mid-job: every request signs a fresh one', async () => {
    process.env.AWS_ACCESS_KEY_ID = AWS_KEY.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = AWS_KEY.secretAccessKey;
    const run = await startWith('aws', {
      user: 'backstage',
      cluster: { authProvider: 'aws' },
      secrets: [AWS_KEY.secretAccessKey, 'k8s-aws-v1.', 'X-Amz-Signature'],
    });
    let restoreClock = () => {};
    try {
      const sts = statefulSetIn(
        await run.pruner.scan('component:default/app-aws-expiry'),
        'shop',
        'db-aws-expiry',
      );
      expect(sts.orphans).toHaveLength(6);
      // STS-presigned tokens live 15 minutes from their X-Amz-Date. Signing
      // with a clock 14 min 57 s behind (the simulator keeps the real one)
      // leaves each token 3 s to live: the job outlasts any single one.
      restoreClock = shiftClock(-(15 * 60 - 3) * 1000);
      const first = await new AwsIamStrategy({
        config: new ConfigReader({}),
      }).getCredential({ name: AWS_CLUSTER, url: sim.url, authMetadata: {} });
      // A job re-checks all its claims at once, so it takes a few round trips: slow enough ones outlast a token.
      sim.setLatency(500);
      sim.clearRequests();

      const id = await run.pruner.prune(
        pruneAll(sts, false, 'component:default/app-aws-expiry', AWS_CLUSTER),
      );
      const job = await run.pruner.waitForJob(id, 30000);
      run.texts.push(
        JSON.stringify(job),
        JSON.stringify(await run.pruner.events(id)),
      );

      expect(job).toMatchObject({ status: 'succeeded' });
      expect(job.summary.deleted).toHaveLength(6);
      const log = sim.requests();
      expect(log.filter(r => r.status === 401)).toEqual([]);
      const durationMs = Date.parse(log.at(-1)!.time) - Date.parse(log[0].time);
      expect(durationMs).toBeGreaterThan(4000);
      // A token signed when the job started, as a client caching it would still send it, is refused now.
      expect(
        await getWithToken(
          '/api/v1/namespaces/shop/pods',
          (first as { token: string }).token,
        ),
      ).toBe(401);
      run.expectNoLeak([
        AWS_KEY.secretAccessKey,
        'k8s-aws-v1.',
        'X-Amz-Signature',
      ]);
    } finally {
      restoreClock();
      await run.stop();
    }
  });
});

describe('authProviders googleServiceAccount (Workload Identity Federation) and google (a user token)', () => {
  // Plain http: google-auth-library, in this process, trusts only the public CAs.
  const SUBJECT_ISSUER = 'https://token.actions.example.com';
  const POOL =
    'iam.googleapis.com/projects/123456789/locations/global/workloadIdentityPools/backstage';
  const AUDIENCE = `//${POOL}/providers/ci`;
  const subjectKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let googleSim: KubeSim;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pvc-pruner-google-'));
    googleSim = await startKubeSim({
      scenario: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
        {
          apiVersion: 'storage.k8s.io/v1',
          kind: 'StorageClass',
          metadata: { name: 'standard' },
          provisioner: 'sim.csi.k8s.io',
          reclaimPolicy: 'Delete',
          volumeBindingMode: 'Immediate',
        },
        ...statefulSetObjects({
          name: 'db-google',
          namespace: 'shop',
          kubernetesId: 'app-googleserviceaccount',
          replicas: 1,
          orphanOrdinals: [1, 2],
        }),
        ...statefulSetObjects({
          name: 'db-google-user',
          namespace: 'shop',
          kubernetesId: 'app-google',
          replicas: 1,
          orphanOrdinals: [1],
        }),
      ] as KubeObject[],
      timeFactor: TIME_FACTOR,
      auth: {
        google: {
          audience: AUDIENCE,
          subjectIssuer: {
            issuer: SUBJECT_ISSUER,
            audiences: [AUDIENCE],
            keys: [subjectKeys.publicKey],
            groupsClaim: 'teams',
          },
        },
        bindings: [
          {
            subjects: [
              { kind: 'Group', name: `principalSet://${POOL}/group/pruners` },
            ],
            rules: rbacRules(),
          },
        ],
      },
    });
    await waitForSettled(googleSim);
  });

  afterAll(async () => {
    await googleSim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The external_account credential JSON of a workload whose subject token names `teams`. */
  async function credentialsFor(subject: string, teams: string[]) {
    const file = join(dir, `${subject}.jwt`);
    writeFileSync(
      file,
      await new SignJWT({ sub: subject, teams })
        .setProtectedHeader({ alg: 'RS256' })
        .setIssuer(SUBJECT_ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('10m')
        .sign(subjectKeys.privateKey),
    );
    return JSON.stringify(googleSim.googleExternalAccount(file));
  }

  /** A user's Google access token: the simulator's STS stands in for the user's Google sign-in. */
  const googleUserToken = async (sub = 'alice', teams = ['pruners']) => {
    const subject = await new SignJWT({ sub, teams })
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuer(SUBJECT_ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('10m')
      .sign(subjectKeys.privateKey);
    return {
      sim: googleSim,
      user: `principal://${POOL}/subject/${sub}`,
      token: await accessToken(`${googleSim.url}/google/sts/v1/token`, {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        audience: AUDIENCE,
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        subject_token: subject,
        requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      }),
    };
  };

  /** The plugin with a google cluster, and requests carrying the user's Google access token as the card sends it. */
  const startAsGoogleUser = (
    google: Awaited<ReturnType<typeof googleUserToken>>,
  ) =>
    startWith(
      'google',
      {
        user: google.user,
        cluster: { authProvider: 'google' },
        headers: { 'Backstage-Kubernetes-Authorization-google': google.token },
        secrets: [google.token],
      },
      { sim: google.sim },
    );

  const setupOf = (subject: string) => ({
    user: `principal://${POOL}/subject/${subject}`,
    cluster: { authProvider: 'googleServiceAccount' },
    secrets: ['ya29.'],
  });

  it('scans and really prunes as the federated principal, and no access token leaks', async () => {
    const run = await startWith('googleServiceAccount', setupOf('backstage'), {
      sim: googleSim,
      kubernetes: {
        googleServiceAccountCredentials: await credentialsFor('backstage', [
          'pruners',
        ]),
      },
    });
    try {
      googleSim.clearRequests();
      const scan = await run.pruner.scan(
        'component:default/app-googleserviceaccount',
      );
      run.texts.push(JSON.stringify(scan));
      const sts = statefulSetIn(scan, 'shop', 'db-google');
      expect(sts.orphans.map(o => o.name)).toEqual([
        'data-db-google-1',
        'data-db-google-2',
      ]);
      const id = await run.pruner.prune(
        pruneAll(
          sts,
          false,
          'component:default/app-googleserviceaccount',
          clusterNameOf('googleServiceAccount'),
        ),
      );
      const job = await run.pruner.waitForJob(id);
      run.texts.push(
        JSON.stringify(job),
        JSON.stringify(await run.pruner.events(id)),
      );

      expect(job.status).toBe('succeeded');
      expect(job.summary.deleted.map(d => d.name)).toEqual([
        'data-db-google-1',
        'data-db-google-2',
      ]);
      expect(
        googleSim
          .requests()
          .filter(
            r =>
              r.method === 'DELETE' && r.resource === 'persistentvolumeclaims',
          )
          .map(r => [r.user, r.status]),
      ).toEqual([
        [`principal://${POOL}/subject/backstage`, 202],
        [`principal://${POOL}/subject/backstage`, 202],
      ]);
      run.expectNoLeak(['ya29.']);
    } finally {
      await run.stop();
    }
  });

  it('reports what the cluster refuses a principal without RBAC (403)', async () => {
    const run = await startWith('googleServiceAccount', setupOf('stranger'), {
      sim: googleSim,
      kubernetes: {
        googleServiceAccountCredentials: await credentialsFor('stranger', []),
      },
    });
    try {
      const scan = await run.pruner.scan(
        'component:default/app-googleserviceaccount',
      );
      expect(scan.clusters[0]).toMatchObject({
        ok: false,
        error: {
          statusCode: 403,
          message: expect.stringContaining(
            `User "principal://${POOL}/subject/stranger" cannot list resource "statefulsets"`,
          ),
        },
      });
    } finally {
      await run.stop();
    }
  });

  it('scans and really prunes with the user’s Google access token, which the cluster authenticates', async () => {
    const google = await googleUserToken();
    const run = await startAsGoogleUser(google);
    try {
      const scan = await run.pruner.scan('component:default/app-google');
      const sts = statefulSetIn(scan, 'shop', 'db-google-user');
      expect(sts.orphans.map(o => o.name)).toEqual(['data-db-google-user-1']);
      const id = await run.pruner.prune(
        pruneAll(sts, false, 'component:default/app-google', 'google-cluster'),
      );
      const job = await run.pruner.waitForJob(id);
      run.texts.push(
        JSON.stringify(scan),
        JSON.stringify(job),
        JSON.stringify(await run.pruner.events(id)),
      );
      expect(job.status).toBe('succeeded');
      expect(
        google.sim
          .requests()
          .filter(
            r =>
              r.method === 'DELETE' && r.resource === 'persistentvolumeclaims',
          )
          .map(r => r.user)
          .at(-1),
      ).toBe(google.user);
      run.expectNoLeak([google.token]);
    } finally {
      await run.stop();
    }
  });

  it('reports what the cluster refuses the user’s Google token (403), naming the verb and resource', async () => {
    const google = await googleUserToken('mallory', []);
    const run = await startAsGoogleUser(google);
    try {
      const scan = await run.pruner.scan('component:default/app-google');
      run.texts.push(JSON.stringify(scan));
      expect(scan.clusters[0]).toMatchObject({
        ok: false,
        error: {
          statusCode: 403,
          message: expect.stringContaining(
            `User "principal://${POOL}/subject/mallory" cannot list resource "statefulsets"`,
          ),
        },
      });
      run.expectNoLeak([google.token]);
    } finally {
      await run.stop();
    }
  });
});

describe('the fleet view of a cluster of a client-side provider', () => {
  const oidc = PROVIDERS.find(p => p.name === 'oidc')!;
  const TOKEN_HEADER = 'Backstage-Kubernetes-Authorization-oidc-okta';
  const fleetSts = (fleet: FleetResponse) =>
    fleet.items
      .filter(e => e.entityRef === 'component:default/app-oidc-fleet')
      .flatMap(e => e.statefulSets.map(s => `${s.name}: ${s.orphans}`));

  it("reads it with the caller's own token, never shares that read, and without a token asks them to sign in", async () => {
    const setup = await oidc.allowed();
    const run = await startWith('oidc', setup);
    try {
      for (let i = 0; i < 2; i++) {
        sim.clearRequests();
        const { status, body } = await run.pruner.get<FleetResponse>(
          '/v1/fleet',
        );
        run.texts.push(JSON.stringify(body));
        expect(status).toBe(200);
        expect(body.clusters).toEqual([
          { cluster: clusterNameOf('oidc'), ok: true },
        ]);
        expect(fleetSts(body)).toEqual(['db-oidc-fleet: 3']);
        // Read live, as the user, each time: no watch cache holds what one user's token read.
        const reads = sim.requests().filter(r => r.method === 'GET');
        expect(reads.length).toBeGreaterThan(0);
        expect(new Set(reads.map(r => r.user))).toEqual(new Set([setup.user]));
        expect(
          reads.some(r => r.verb === 'watch' || /watch=(1|true)/.test(r.query)),
        ).toBe(false);
      }

      delete setup.headers![TOKEN_HEADER];
      sim.clearRequests();
      const { status, body } = await run.pruner.get<FleetResponse>('/v1/fleet');
      expect(status).toBe(200);
      expect(body.clusters).toEqual([
        {
          cluster: clusterNameOf('oidc'),
          ok: false,
          error: {
            name: 'ClusterRequestError',
            statusCode: 401,
            message: expect.stringMatching(
              /authenticates each user with oidc\.okta, and this request carried no such token; sign in to that provider and reload$/,
            ),
          },
        },
      ]);
      expect(body.items).toEqual([]);
      expect(body.totals).toMatchObject({ entities: 0, orphans: 0 });
      expect(body.unowned?.statefulSets ?? []).toEqual([]);
      expect(sim.requests()).toEqual([]);
      run.expectNoLeak(setup.secrets);
    } finally {
      await run.stop();
    }
  });

  it('shows a user whose token the cluster refuses nothing of it, though the plugin could read it', async () => {
    const setup = await oidc.refused();
    const run = await startWith('oidc', setup);
    try {
      const { status, body } = await run.pruner.get<FleetResponse>('/v1/fleet');
      expect(status).toBe(200);
      expect(body.clusters).toEqual([
        expect.objectContaining({
          cluster: clusterNameOf('oidc'),
          ok: false,
          error: expect.objectContaining({ statusCode: 403 }),
        }),
      ]);
      expect(body.items).toEqual([]);
      expect(body.totals).toMatchObject({ orphans: 0 });
    } finally {
      await run.stop();
    }
  });
});
