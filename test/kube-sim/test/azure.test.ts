import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { AKS_SCOPE } from '../src';
import { PVCS, groupBinding } from './authFixtures';
import { SimHarness, sleep, startHarness } from './helpers';

jest.setTimeout(60000);

const CLIENT = {
  clientId: '0f6a3c1e-backstage',
  clientSecret: 'azure-client-secret-EXAMPLE',
  username: 'backstage-aks',
  groups: ['aks-readers'],
};

/**
 * Runs Backstage's AzureIdentityStrategy (its default DefaultAzureCredential) in a child process,
 * since only a process started with NODE_EXTRA_CA_CERTS trusts the simulator's https authority.
 */
function azureStrategyToken(
  h: SimHarness,
  env: Record<string, string>,
): Promise<{ token?: string; error?: string }> {
  const caFile = h.writeFile('azure-ca.pem', h.sim.caCert!);
  const script = `
    const { AzureIdentityStrategy } = require('@backstage/plugin-kubernetes-backend');
    const logger = { info() {}, warn() {}, debug() {}, error() {}, child() { return logger; } };
    new AzureIdentityStrategy(logger).getCredential().then(
      c => process.stdout.write(JSON.stringify(c)),
      e => { process.stderr.write(String(e && e.message)); process.exit(1); },
    );`;
  return new Promise(resolve => {
    execFile(
      process.execPath,
      ['-e', script],
      {
        cwd: join(__dirname, '..'),
        timeout: 45000,
        env: {
          PATH: process.env.PATH,
          HOME: h.home,
          NODE_EXTRA_CA_CERTS: caFile,
          AZURE_TENANT_ID: 'adfs',
          AZURE_AUTHORITY_HOST: h.sim.azureAuthorityHost!,
          ...env,
        },
      },
      (error, stdout, stderr) => {
        if (error) resolve({ error: `${stderr}` || error.message });
        else resolve({ token: JSON.parse(stdout).token });
      },
    );
  });
}

describe('Azure client-secret credentials through the simulated authority', () => {
  let h: SimHarness;

  beforeAll(async () => {
    h = await startHarness({
      auth: {
        azure: { clients: [CLIENT] },
        bindings: [groupBinding('aks-readers', ['list'])],
      },
    });
  });
  afterAll(() => h.close());

  const lastRequest = () => h.sim.requests().at(-1);

  it("accepts the token Backstage's AzureIdentityStrategy gets from DefaultAzureCredential", async () => {
    const { token, error } = await azureStrategyToken(h, {
      AZURE_CLIENT_ID: CLIENT.clientId,
      AZURE_CLIENT_SECRET: CLIENT.clientSecret,
    });
    expect(error).toBeUndefined();
    const res = await h.http('GET', PVCS, { token: token! });
    expect(res.status).toBe(200);
    expect(lastRequest()?.user).toBe('backstage-aks');
    const del = await h.http('DELETE', `${PVCS}/x`, { token: token! });
    expect(del.status).toBe(403);
    expect(del.json().message).toContain('User "backstage-aks" cannot delete');
    const asked = h.sim
      .requests()
      .filter(r => r.path.startsWith('/adfs/'))
      .map(r => `${r.method} ${r.path} ${r.status}`);
    expect(asked).toEqual([
      'GET /adfs/.well-known/openid-configuration 200',
      'POST /adfs/oauth2/token 200',
    ]);
  });

  it('refuses a wrong client secret, so the strategy fails', async () => {
    const { token, error } = await azureStrategyToken(h, {
      AZURE_CLIENT_ID: CLIENT.clientId,
      AZURE_CLIENT_SECRET: 'not-the-secret',
    });
    expect(token).toBeUndefined();
    expect(error).toMatch(/invalid_client|AADSTS7000215/);
  });

  async function grant(form: Record<string, string>) {
    return h.http('POST', '/adfs/oauth2/token', {
      token: null,
      body: new URLSearchParams(form).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
  }

  it('issues tokens for the AKS server application only', async () => {
    const res = await grant({
      grant_type: 'client_credentials',
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
      scope: 'https://management.azure.com/.default',
    });
    expect([res.status, res.json().error]).toEqual([400, 'invalid_scope']);
  });

  it('an expired or unknown access token is 401', async () => {
    const short = await startHarness({
      auth: { azure: { clients: [CLIENT], tokenLifetimeSeconds: 1 } },
    });
    try {
      const res = await short.http('POST', '/adfs/oauth2/token', {
        token: null,
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: CLIENT.clientId,
          client_secret: CLIENT.clientSecret,
          scope: AKS_SCOPE,
        }).toString(),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      expect(res.json()).toMatchObject({ token_type: 'Bearer', expires_in: 1 });
      const token = res.json().access_token;
      expect(
        (await short.http('GET', '/api/v1/namespaces', { token })).status,
      ).toBe(403);
      await sleep(1100);
      expect(
        (await short.http('GET', '/api/v1/namespaces', { token })).status,
      ).toBe(401);
      expect(short.sim.requests().at(-1)?.authError).toContain(
        'access token expired',
      );
      expect(
        (
          await short.http('GET', '/api/v1/namespaces', {
            token: 'aks-sim.forged',
          })
        ).status,
      ).toBe(401);
    } finally {
      await short.close();
    }
  });
});
