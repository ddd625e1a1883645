import { generateKeyPairSync, KeyObject } from 'node:crypto';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { exportJWK, SignJWT } from 'jose';
import { groupBinding, PVCS, refusalReason } from './authFixtures';
import { createTestOidcIssuer } from '../src';
import { pvc, SimHarness, startHarness } from './helpers';

jest.setTimeout(30000);

const ISSUER = 'https://idp.example.com/realms/platform';
const CLIENT_ID = 'backstage';

function rsaKeys() {
  return generateKeyPairSync('rsa', { modulusLength: 2048 });
}

describe('OIDC ID tokens', () => {
  let h: SimHarness;
  const idp = rsaKeys();
  const rotated = rsaKeys();
  const stranger = rsaKeys();

  async function idToken(
    claims: Record<string, unknown>,
    options: {
      key?: KeyObject;
      kid?: string;
      issuer?: string;
      audience?: string | string[];
      expiresIn?: number | string;
      notBefore?: number;
    } = {},
  ) {
    const jwt = new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? 'idp-1' })
      .setIssuer(options.issuer ?? ISSUER)
      .setAudience(options.audience ?? CLIENT_ID)
      .setIssuedAt()
      .setExpirationTime(options.expiresIn ?? '5m');
    if (options.notBefore !== undefined) jwt.setNotBefore(options.notBefore);
    return jwt.sign(options.key ?? idp.privateKey);
  }

  beforeAll(async () => {
    h = await startHarness({
      scenario: [pvc('data-web-0')],
      auth: {
        oidc: [
          {
            issuer: ISSUER,
            audiences: [CLIENT_ID, 'kubectl'],
            keys: {
              keys: [
                {
                  ...(await exportJWK(idp.publicKey)),
                  kid: 'idp-1',
                  alg: 'RS256',
                },
                {
                  ...(await exportJWK(rotated.publicKey)),
                  kid: 'idp-2',
                  alg: 'RS256',
                },
              ],
            },
            usernameClaim: 'email',
            groupsClaim: 'groups',
            groupsPrefix: 'oidc:',
          },
          {
            issuer: 'https://accounts.example.org',
            audiences: ['k8s'],
            keys: [stranger.publicKey],
            groupsClaim: 'roles',
          },
        ],
        bindings: [
          groupBinding('oidc:platform', ['get', 'list', 'delete']),
          {
            subjects: [{ kind: 'User', name: 'viewer@example.com' }],
            rules: [
              {
                apiGroups: [''],
                resources: ['persistentvolumeclaims'],
                verbs: ['list'],
              },
            ],
            namespaces: ['default'],
          },
        ],
      },
    });
  });
  afterAll(() => h.close());

  const lastRequest = () => h.sim.requests().at(-1);

  it('accepts a signed token, mapping the email claim to the user and prefixed groups to RBAC', async () => {
    const token = await idToken({
      sub: '4f1c',
      email: 'ada@example.com',
      email_verified: true,
      groups: ['platform'],
    });
    const res = await h.http('GET', PVCS, { token });
    expect(res.status).toBe(200);
    expect(lastRequest()?.user).toBe('ada@example.com');
  });

  it('accepts a token signed with any key of the JWKS (key rotation)', async () => {
    const token = await idToken(
      { email: 'ada@example.com', groups: ['platform'] },
      { key: rotated.privateKey, kid: 'idp-2', audience: ['kubectl', 'other'] },
    );
    expect((await h.http('GET', PVCS, { token })).status).toBe(200);
  });

  it('applies per-user RBAC: a user with less access is refused, named in the 403', async () => {
    const token = await idToken({
      email: 'viewer@example.com',
      groups: ['dev'],
    });
    expect((await h.http('GET', PVCS, { token })).status).toBe(200);
    const del = await h.http('DELETE', `${PVCS}/data-web-0`, { token });
    expect(del.status).toBe(403);
    expect(del.json().message).toBe(
      'persistentvolumeclaims "data-web-0" is forbidden: User "viewer@example.com" cannot delete resource "persistentvolumeclaims" in API group "" in the namespace "default"',
    );
    const other = await h.http(
      'GET',
      '/api/v1/namespaces/kube-system/persistentvolumeclaims',
      { token },
    );
    expect(other.status).toBe(403);
  });

  it('prefixes non-email usernames with the issuer, as kube-apiserver does by default', async () => {
    const token = await idToken(
      { sub: 'user-7', roles: ['ops'] },
      {
        key: stranger.privateKey,
        issuer: 'https://accounts.example.org',
        audience: 'k8s',
      },
    );
    const res = await h.http('GET', PVCS, { token });
    expect(res.status).toBe(403);
    expect(res.json().message).toContain(
      'User "https://accounts.example.org#user-7" cannot list',
    );
  });

  it('kubectl and client-node send an ID token from the kubeconfig', async () => {
    const token = await idToken({
      email: 'ada@example.com',
      groups: ['platform'],
    });
    const kubeconfig = h.writeFile(
      'oidc.kubeconfig',
      h.sim.kubeconfigFor({ token }),
    );
    const get = await h.kubectl(['get', 'pvc', '-o', 'name'], { kubeconfig });
    expect([get.code, get.stdout.trim()]).toEqual([
      0,
      'persistentvolumeclaim/data-web-0',
    ]);

    const kc = new KubeConfig();
    kc.loadFromString(h.sim.kubeconfigFor(token));
    const list = await kc
      .makeApiClient(CoreV1Api)
      .listNamespacedPersistentVolumeClaim({ namespace: 'default' });
    expect(list.items).toHaveLength(1);
  });

  describe('rejects with 401', () => {
    const cases: Array<[string, () => Promise<string>, RegExp]> = [
      [
        'an expired token',
        () =>
          idToken(
            { email: 'ada@example.com', groups: ['platform'] },
            { expiresIn: Math.floor(Date.now() / 1000) - 30 },
          ),
        /ERR_JWT_EXPIRED/,
      ],
      [
        'a token for another audience',
        () => idToken({ email: 'ada@example.com' }, { audience: 'grafana' }),
        /ERR_JWT_CLAIM_VALIDATION_FAILED.*aud/,
      ],
      [
        'a token not valid before a future time',
        () =>
          idToken(
            { email: 'ada@example.com' },
            { notBefore: Math.floor(Date.now() / 1000) + 600 },
          ),
        /nbf/,
      ],
      [
        'a token signed by a key the issuer does not publish',
        () =>
          idToken({ email: 'ada@example.com' }, { key: stranger.privateKey }),
        /ERR_JWS_SIGNATURE_VERIFICATION_FAILED|ERR_JWKS_NO_MATCHING_KEY/,
      ],
      [
        'a token with a tampered payload',
        async () => {
          const [head, , sig] = (
            await idToken({ email: 'ada@example.com', groups: ['dev'] })
          ).split('.');
          const forged = Buffer.from(
            JSON.stringify({
              iss: ISSUER,
              aud: CLIENT_ID,
              exp: Math.floor(Date.now() / 1000) + 300,
              email: 'ada@example.com',
              groups: ['platform'],
            }),
          ).toString('base64url');
          return `${head}.${forged}.${sig}`;
        },
        /ERR_JWS_SIGNATURE_VERIFICATION_FAILED/,
      ],
      [
        'a token without exp',
        () =>
          new SignJWT({ email: 'ada@example.com' })
            .setProtectedHeader({ alg: 'RS256', kid: 'idp-1' })
            .setIssuer(ISSUER)
            .setAudience(CLIENT_ID)
            .sign(idp.privateKey),
        /exp/,
      ],
      [
        'an unverified email as username',
        () => idToken({ email: 'ada@example.com', email_verified: false }),
        /email not verified/,
      ],
      [
        'a token from an issuer the cluster does not trust',
        () =>
          idToken(
            { email: 'ada@example.com' },
            { issuer: 'https://evil.example' },
          ),
        /unknown bearer token/,
      ],
    ];
    it.each(cases)('%s', async (_name, make, reason) => {
      expect(await refusalReason(h, await make())).toMatch(reason);
    });
  });

  it('trusts an issuer added after start', async () => {
    const late = rsaKeys();
    const token = await idToken(
      { sub: 'robot' },
      {
        key: late.privateKey,
        issuer: 'https://late.example',
        audience: 'cluster',
      },
    );
    expect((await h.http('GET', PVCS, { token })).status).toBe(401);
    h.sim.addOidcIssuer({
      issuer: 'https://late.example',
      audiences: ['cluster'],
      keys: [late.publicKey],
      usernamePrefix: '-',
    });
    const res = await h.http('GET', PVCS, { token });
    expect(res.status).toBe(403);
    expect(res.json().message).toContain('User "robot" cannot list');
  });

  it('createTestOidcIssuer gives tests an issuer whose ID tokens are accepted until they expire', async () => {
    const issuer = await createTestOidcIssuer({
      issuer: 'https://test-idp.example',
      audiences: ['pvc-pruner'],
      usernameClaim: 'email',
      groupsClaim: 'groups',
      groupsPrefix: 'oidc:',
    });
    h.sim.addOidcIssuer(issuer.options);
    const token = await issuer.idToken({
      email: 'grace@example.com',
      groups: ['platform'],
    });
    expect((await h.http('GET', PVCS, { token })).status).toBe(200);
    expect(h.sim.requests().at(-1)?.user).toBe('grace@example.com');
    const expired = await issuer.idToken(
      { email: 'grace@example.com', groups: ['platform'] },
      Math.floor(Date.now() / 1000) - 1,
    );
    expect(await refusalReason(h, expired)).toMatch(/ERR_JWT_EXPIRED/);
  });
});
