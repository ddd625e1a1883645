import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { namespace, pvc, SimHarness, startHarness } from './helpers';

jest.setTimeout(30000);

const ISSUER = 'https://idp.example.com';
const pvcs = (ns: string) => `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
const PVC_READ = {
  apiGroups: [''],
  resources: ['persistentvolumeclaims'],
  verbs: ['get', 'list', 'watch'],
};
const PVC_DELETE = {
  apiGroups: [''],
  resources: ['persistentvolumeclaims'],
  verbs: ['delete'],
};

describe('per-user RBAC across authentication methods', () => {
  let h: SimHarness;
  const idp = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const idToken = (email: string, groups: string[]) =>
    new SignJWT({ email, groups })
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuer(ISSUER)
      .setAudience('kubernetes')
      .setExpirationTime('5m')
      .sign(idp.privateKey);

  beforeAll(async () => {
    h = await startHarness({
      scenario: [
        namespace('shop'),
        namespace('billing'),
        pvc('data-db-0', 'shop'),
        pvc('data-db-1', 'shop'),
        pvc('data-ledger-0', 'billing'),
      ],
      auth: {
        oidc: [
          {
            issuer: ISSUER,
            audiences: ['kubernetes'],
            keys: [idp.publicKey],
            usernameClaim: 'email',
            groupsClaim: 'groups',
          },
        ],
        bindings: [
          // Everyone authenticated may read claims in shop.
          {
            subjects: [{ kind: 'Group', name: 'system:authenticated' }],
            rules: [PVC_READ],
            namespaces: ['shop'],
          },
          // Only the shop-admins group may delete there.
          {
            subjects: [{ kind: 'Group', name: 'shop-admins' }],
            rules: [PVC_DELETE],
            namespaces: ['shop'],
          },
          // One named user may read everywhere.
          {
            subjects: [{ kind: 'User', name: 'auditor@example.com' }],
            rules: [PVC_READ],
          },
        ],
      },
    });
  });
  afterAll(() => h.close());

  it('gives one user less access than another, whichever way each authenticated', async () => {
    const admin = await idToken('ada@example.com', ['shop-admins']);
    const dev = await idToken('dev@example.com', ['developers']);
    const adminCert = h.sim.issueClientCertificate({
      user: 'ops-bot',
      groups: ['shop-admins'],
    });

    for (const auth of [{ token: dev }, { token: admin }]) {
      expect((await h.http('GET', pvcs('shop'), auth)).status).toBe(200);
    }
    const refused = await h.http('DELETE', `${pvcs('shop')}/data-db-1`, {
      token: dev,
    });
    expect(refused.status).toBe(403);
    expect(refused.json().message).toBe(
      'persistentvolumeclaims "data-db-1" is forbidden: User "dev@example.com" cannot delete resource "persistentvolumeclaims" in API group "" in the namespace "shop"',
    );
    expect(
      h.sim.store.get('persistentvolumeclaims', 'shop', 'data-db-1'),
    ).toBeDefined();

    const byOidc = await h.http('DELETE', `${pvcs('shop')}/data-db-1`, {
      token: admin,
    });
    // 202: the pvc-protection finalizer keeps the claim until nothing uses it.
    expect(byOidc.status).toBe(202);
    const byCert = await h.http('DELETE', `${pvcs('shop')}/data-db-0`, {
      token: null,
      clientCertificate: adminCert,
    });
    expect(byCert.status).toBe(202);
    for (const name of ['data-db-0', 'data-db-1']) {
      const claim = h.sim.store.get('persistentvolumeclaims', 'shop', name);
      // Gone, or going once pvc-protection lets it.
      expect(claim === undefined || !!claim.metadata.deletionTimestamp).toBe(
        true,
      );
    }

    const elsewhere = await h.http('GET', pvcs('billing'), { token: admin });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.json().message).toBe(
      'persistentvolumeclaims is forbidden: User "ada@example.com" cannot list resource "persistentvolumeclaims" in API group "" in the namespace "billing"',
    );
  });

  it('binds a user by name, and cluster-wide bindings reach every namespace but not other resources', async () => {
    const auditor = await idToken('auditor@example.com', []);
    expect(
      (await h.http('GET', pvcs('billing'), { token: auditor })).status,
    ).toBe(200);
    expect(
      (
        await h.http('GET', '/api/v1/persistentvolumeclaims', {
          token: auditor,
        })
      ).status,
    ).toBe(200);
    const pods = await h.http('GET', '/api/v1/namespaces/billing/pods', {
      token: auditor,
    });
    expect(pods.status).toBe(403);
    expect(pods.json().message).toBe(
      'pods is forbidden: User "auditor@example.com" cannot list resource "pods" in API group "" in the namespace "billing"',
    );
  });

  it('bindings apply to static-token users too, beside their own grant', async () => {
    const token = h.sim.addToken({ user: 'ledger-bot', rules: [] });
    expect((await h.http('GET', pvcs('billing'), { token })).status).toBe(403);
    const remove = h.sim.addBinding({
      subjects: [{ kind: 'User', name: 'ledger-bot' }],
      rules: [PVC_READ],
      namespaces: ['billing'],
    });
    expect((await h.http('GET', pvcs('billing'), { token })).status).toBe(200);
    remove();
    expect((await h.http('GET', pvcs('billing'), { token })).status).toBe(403);
  });

  it('a binding added at run time takes effect at once and its removal too', async () => {
    const dev = await idToken('dev@example.com', ['developers']);
    const path = `${pvcs('billing')}/data-ledger-0`;
    expect((await h.http('GET', path, { token: dev })).status).toBe(403);
    const remove = h.sim.addBinding({
      subjects: [{ kind: 'Group', name: 'developers' }],
      rules: [{ ...PVC_READ, resourceNames: ['data-ledger-0'] }],
      namespaces: ['billing'],
    });
    expect((await h.http('GET', path, { token: dev })).status).toBe(200);
    remove();
    expect((await h.http('GET', path, { token: dev })).status).toBe(403);
  });
});
