import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { createCertificateAuthority, startKubeSim } from '../src';
import { PVCS, groupBinding } from './authFixtures';
import { pvc, SimHarness, startHarness } from './helpers';

jest.setTimeout(30000);

describe('x509 client certificates', () => {
  let h: SimHarness;

  beforeAll(async () => {
    h = await startHarness({
      scenario: [pvc('data-web-0')],
      auth: {
        bindings: [
          groupBinding('team-a', ['get', 'list', 'watch'], ['default']),
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

  it('names a kubeconfig cluster, context and user, so kubeconfigs of several clusters can be merged', async () => {
    const dana = h.sim.issueClientCertificate({
      user: 'dana',
      groups: ['team-a'],
    });
    const kubeconfig = h.writeFile(
      'named.kubeconfig',
      h.sim.kubeconfigFor(
        { clientCertificate: dana.cert, clientKey: dana.key },
        { name: 'second-cluster' },
      ),
    );
    const contexts = await h.kubectl(['config', 'get-contexts', '-o', 'name'], {
      kubeconfig,
    });
    expect(contexts.stdout.trim()).toBe('second-cluster');
    const get = await h.kubectl(
      ['--context', 'second-cluster', 'get', 'pvc', '-o', 'name'],
      { kubeconfig },
    );
    expect([get.code, get.stdout.trim()]).toEqual([
      0,
      'persistentvolumeclaim/data-web-0',
    ]);
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

  it('the admin API issues client certificates and adds and removes bindings, for other processes', async () => {
    const issued = await h.http('POST', '/_sim/client-certificates', {
      body: { user: 'remote', groups: ['remote-team'] },
    });
    expect(issued.status).toBe(200);
    const cert = issued.json();
    expect(cert.cert).toMatch(/BEGIN CERTIFICATE/);
    const asRemote = () =>
      h.http('GET', PVCS, { token: null, clientCertificate: cert });
    expect((await asRemote()).status).toBe(403);

    const added = await h.http('POST', '/_sim/bindings', {
      body: groupBinding('remote-team', ['list']),
    });
    expect(added.status).toBe(200);
    expect((await asRemote()).status).toBe(200);
    const removed = await h.http('DELETE', `/_sim/bindings/${added.json().id}`);
    expect(removed.status).toBe(200);
    expect((await asRemote()).status).toBe(403);

    const invalid = await h.http('POST', '/_sim/bindings', {
      body: { subjects: [{ kind: 'ServiceAccount', name: 'x' }], rules: [] },
    });
    expect(invalid.status).toBe(400);
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
