import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { createCertificateAuthority, startKubeSim } from '../src';
import { pvc, SimHarness, startHarness } from './helpers';

jest.setTimeout(30000);

const PVCS = '/api/v1/namespaces/default/persistentvolumeclaims';

describe('x509 client certificates', () => {
  let h: SimHarness;

  beforeAll(async () => {
    h = await startHarness({
      scenario: [pvc('data-web-0')],
      auth: {
        bindings: [
          {
            subjects: [{ kind: 'Group', name: 'team-a' }],
            rules: [
              {
                apiGroups: [''],
                resources: ['persistentvolumeclaims'],
                verbs: ['get', 'list', 'watch'],
              },
            ],
            namespaces: ['default'],
          },
        ],
      },
    });
  });
  afterAll(() => h.close());

  const kubeconfigFile = (name: string, cert: { cert: string; key: string }) =>
    h.writeFile(
      name,
      h.sim.kubeconfigFor({
        clientCertificate: cert.cert,
        clientKey: cert.key,
      }),
    );

  it('exposes the client CA, distinct from the serving certificate', () => {
    expect(h.sim.clientCaCert).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(h.sim.clientCaCert).not.toBe(h.sim.caCert);
  });

  it('kubectl with client-certificate-data authenticates as CN, with the groups in O', async () => {
    const alice = h.sim.issueClientCertificate({
      user: 'alice',
      groups: ['team-a', 'qa'],
    });
    const kubeconfig = kubeconfigFile('alice.kubeconfig', alice);
    expect(
      h.sim.kubeconfigFor({
        clientCertificate: alice.cert,
        clientKey: alice.key,
      }),
    ).toContain('client-certificate-data');

    const get = await h.kubectl(['get', 'pvc', '-o', 'name'], { kubeconfig });
    expect([get.code, get.stdout.trim()]).toEqual([
      0,
      'persistentvolumeclaim/data-web-0',
    ]);
    const del = await h.kubectl(['delete', 'pvc', 'data-web-0'], {
      kubeconfig,
    });
    expect(del.code).toBe(1);
    expect(del.stderr).toContain(
      'persistentvolumeclaims "data-web-0" is forbidden: User "alice" cannot delete resource "persistentvolumeclaims" in API group "" in the namespace "default"',
    );
    expect(
      h.sim.store.get('persistentvolumeclaims', 'default', 'data-web-0'),
    ).toBeDefined();
    const users = h.sim
      .requests()
      .filter(r => r.path === PVCS || r.path === `${PVCS}/data-web-0`)
      .map(r => r.user);
    expect(users.length).toBeGreaterThan(0);
    expect(new Set(users)).toEqual(new Set(['alice']));
  });

  it('@kubernetes/client-node with a client certificate in its kubeconfig', async () => {
    const bob = h.sim.issueClientCertificate({
      user: 'bob',
      groups: ['team-a'],
    });
    const kc = new KubeConfig();
    kc.loadFromString(
      h.sim.kubeconfigFor({ clientCertificate: bob.cert, clientKey: bob.key }),
    );
    const core = kc.makeApiClient(CoreV1Api);
    const list = await core.listNamespacedPersistentVolumeClaim({
      namespace: 'default',
    });
    expect(list.items.map(i => i.metadata?.name)).toEqual(['data-web-0']);
    await expect(
      core.listNamespacedPersistentVolumeClaim({ namespace: 'kube-system' }),
    ).rejects.toMatchObject({ code: 403 });
  });

  it('a user without any binding is authenticated but forbidden', async () => {
    const carol = h.sim.issueClientCertificate({ user: 'carol' });
    const res = await h.http('GET', PVCS, {
      token: null,
      clientCertificate: carol,
    });
    expect(res.status).toBe(403);
    expect(res.json().message).toBe(
      'persistentvolumeclaims is forbidden: User "carol" cannot list resource "persistentvolumeclaims" in API group "" in the namespace "default"',
    );
  });

  it('rejects a certificate another CA signed with 401, with kubectl and raw TLS', async () => {
    const foreign = createCertificateAuthority(
      'someone-else',
    ).issueClientCertificate({
      user: 'alice',
      groups: ['team-a', 'system:masters'],
    });
    const res = await h.http('GET', PVCS, {
      token: null,
      clientCertificate: foreign,
    });
    expect(res.status).toBe(401);
    expect(res.json()).toMatchObject({
      kind: 'Status',
      code: 401,
      reason: 'Unauthorized',
    });

    const kubectl = await h.kubectl(['get', 'pvc'], {
      kubeconfig: kubeconfigFile('foreign.kubeconfig', foreign),
    });
    expect(kubectl.code).toBe(1);
    expect(kubectl.stderr).toContain('Unauthorized');
    expect(h.sim.requests().at(-1)).toMatchObject({
      status: 401,
      authError: expect.stringContaining('verifying certificate'),
    });
  });

  it('rejects an expired certificate and one not yet valid', async () => {
    const day = 24 * 60 * 60 * 1000;
    const expired = h.sim.issueClientCertificate({
      user: 'alice',
      groups: ['team-a'],
      notBefore: new Date(Date.now() - 10 * day),
      notAfter: new Date(Date.now() - day),
    });
    const future = h.sim.issueClientCertificate({
      user: 'alice',
      groups: ['team-a'],
      notBefore: new Date(Date.now() + day),
      notAfter: new Date(Date.now() + 10 * day),
    });
    for (const clientCertificate of [expired, future]) {
      const res = await h.http('GET', PVCS, { token: null, clientCertificate });
      expect(res.status).toBe(401);
    }
  });

  it('a valid token still authenticates beside an untrusted certificate, as the union authenticator does', async () => {
    const foreign = createCertificateAuthority().issueClientCertificate({
      user: 'mallory',
    });
    const res = await h.http('GET', PVCS, { clientCertificate: foreign });
    expect(res.status).toBe(200);
    expect(h.sim.requests().at(-1)?.user).toBe('kube-sim-admin');
  });

  it('system:masters in O is allowed everything, as kube-apiserver binds it to cluster-admin', async () => {
    const admin = h.sim.issueClientCertificate({
      user: 'root',
      groups: ['system:masters'],
    });
    const res = await h.http(
      'DELETE',
      '/api/v1/namespaces/default/persistentvolumeclaims/missing',
      {
        token: null,
        clientCertificate: admin,
      },
    );
    expect(res.status).toBe(404);
  });

  it('over plain http there is no client CA and issuing a certificate says why', async () => {
    const sim = await startKubeSim({ https: false });
    try {
      expect(sim.clientCaCert).toBeUndefined();
      expect(() => sim.issueClientCertificate({ user: 'x' })).toThrow(/https/);
    } finally {
      await sim.close();
    }
  });
});
