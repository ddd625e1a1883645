import { generateKeyPairSync } from 'node:crypto';
import { createServer, Socket } from 'node:net';
import { ConfigReader } from '@backstage/config';
import { GoogleServiceAccountStrategy } from '@backstage/plugin-kubernetes-backend';
import { SignJWT } from 'jose';
import { PVCS, groupBinding } from './authFixtures';
import { SimHarness, startHarness } from './helpers';

jest.setTimeout(60000);

const SUBJECT_ISSUER = 'https://token.actions.example.com';
const POOL =
  'iam.googleapis.com/projects/123456789/locations/global/workloadIdentityPools/backstage';
const AUDIENCE = `//${POOL}/providers/ci`;

async function strategyToken(credentials: object) {
  const strategy = new GoogleServiceAccountStrategy({
    config: new ConfigReader({
      kubernetes: {
        googleServiceAccountCredentials: JSON.stringify(credentials),
      },
    }),
  });
  const credential = await strategy.getCredential();
  if (credential.type !== 'bearer token') throw new Error(credential.type);
  return credential.token;
}

describe('Google: GoogleServiceAccountStrategy through Workload Identity Federation', () => {
  let h: SimHarness;
  const subjectKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const subjectToken = (
    claims: Record<string, unknown>,
    audience = AUDIENCE,
    expiresIn: string | number = '10m',
  ) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuer(SUBJECT_ISSUER)
      .setAudience(audience)
      .setExpirationTime(expiresIn)
      .sign(subjectKeys.privateKey);

  beforeAll(async () => {
    // Plain http: google-auth-library, in this process, trusts only the public CAs.
    h = await startHarness({
      https: false,
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
          groupBinding(`principalSet://${POOL}/group/platform`, ['list']),
        ],
      },
    });
  });
  afterAll(() => h.close());

  const lastRequest = () => h.sim.requests().at(-1);

  it("accepts the access token Backstage's strategy gets for an external_account credential", async () => {
    const file = h.writeFile(
      'subject-token',
      await subjectToken({ sub: 'repo:shop/api', teams: ['platform'] }),
    );
    const credentials = h.sim.googleExternalAccount(file);
    expect(credentials).toMatchObject({
      type: 'external_account',
      token_url: `${h.sim.url}/google/sts/v1/token`,
    });
    const token = await strategyToken(credentials);
    const res = await h.http('GET', PVCS, { token });
    expect(res.status).toBe(200);
    expect(lastRequest()?.user).toBe(
      `principal://${POOL}/subject/repo:shop/api`,
    );
    const del = await h.http('DELETE', `${PVCS}/x`, { token });
    expect(del.status).toBe(403);
    expect(
      h.sim
        .requests()
        .filter(r => r.path === '/google/sts/v1/token')
        .map(r => r.status),
    ).toEqual([200]);
  });

  it('refuses an expired subject token, one for another pool provider and one signed by another key', async () => {
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const tokens = [
      await subjectToken(
        { sub: 'repo:shop/api' },
        AUDIENCE,
        Math.floor(Date.now() / 1000) - 5,
      ),
      await subjectToken({ sub: 'repo:shop/api' }, `//${POOL}/providers/other`),
      await new SignJWT({ sub: 'repo:shop/api' })
        .setProtectedHeader({ alg: 'RS256' })
        .setIssuer(SUBJECT_ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('10m')
        .sign(stranger.privateKey),
    ];
    for (const [i, subject] of tokens.entries()) {
      const file = h.writeFile(`bad-subject-${i}`, subject);
      await expect(
        strategyToken(h.sim.googleExternalAccount(file)),
      ).rejects.toThrow(/invalid_grant/);
    }
  });

  it('an unknown access token is 401', async () => {
    const res = await h.http('GET', PVCS, { token: 'ya29.sim-forged' });
    expect(res.status).toBe(401);
  });

  it("a service-account key's token_uri is ignored: google-auth-library posts to www.googleapis.com", async () => {
    // A CONNECT proxy that records where the SDK goes, then hangs up.
    const targets: string[] = [];
    const proxy = createServer((socket: Socket) => {
      socket.once('data', data => {
        targets.push(data.toString().split(' ')[1]);
        socket.destroy();
      });
    });
    await new Promise<void>(resolve => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as { port: number };
    const saved = {
      HTTPS_PROXY: process.env.HTTPS_PROXY,
      NO_PROXY: process.env.NO_PROXY,
    };
    process.env.HTTPS_PROXY = `http://127.0.0.1:${port}`;
    process.env.NO_PROXY = '';
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    h.sim.clearRequests();
    try {
      await expect(
        strategyToken({
          type: 'service_account',
          project_id: 'shop',
          private_key_id: 'k1',
          private_key: privateKey
            .export({ type: 'pkcs8', format: 'pem' })
            .toString(),
          client_email: 'backstage@shop.iam.gserviceaccount.com',
          client_id: '1',
          token_uri: `${h.sim.url}/google/sts/v1/token`,
        }),
      ).rejects.toThrow();
    } finally {
      process.env.HTTPS_PROXY = saved.HTTPS_PROXY;
      process.env.NO_PROXY = saved.NO_PROXY;
      if (saved.HTTPS_PROXY === undefined) delete process.env.HTTPS_PROXY;
      if (saved.NO_PROXY === undefined) delete process.env.NO_PROXY;
      await new Promise(resolve => proxy.close(resolve));
    }
    expect(targets.length).toBeGreaterThan(0);
    expect(new Set(targets)).toEqual(new Set(['www.googleapis.com:443']));
    // The simulator was never asked.
    expect(h.sim.requests()).toEqual([]);
  });
});
