import { KubeObject, KubeSim, startKubeSim } from 'kube-sim';
import type { KubernetesCredential } from '@backstage/plugin-kubernetes-node';
import { ClusterConnection } from './ClusterConnection';
import { KubeGateway } from './KubeGateway';

/* Credentials reach the cluster as the simulator authenticates them, asked for as often as they may change. */

let sim: KubeSim;

beforeAll(async () => {
  sim = await startKubeSim({
    controllers: false,
    https: true,
    scenario: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
    ] as KubeObject[],
    auth: {
      bindings: [
        {
          subjects: [{ kind: 'Group', name: 'pruners' }],
          rules: [
            {
              apiGroups: ['', 'coordination.k8s.io'],
              resources: ['*'],
              verbs: ['*'],
            },
          ],
        },
      ],
    },
  });
});

afterAll(() => sim.close());

function gatewayWith(
  credential: () => Promise<KubernetesCredential>,
  isStatic: boolean,
) {
  const connection = new ClusterConnection(
    { name: 'demo', server: sim.url, ca: sim.caCert, skipTLSVerify: false },
    credential,
    isStatic,
  );
  return new KubeGateway('demo', connection, 5000);
}

describe('ClusterConnection', () => {
  it.each([
    [
      'asks an expiring credential for every request, reads and writes alike',
      false,
      3,
    ],
    ['applies a static credential once', true, 1],
  ])('%s', async (_what, isStatic, credentialCalls) => {
    const credential = jest.fn(async () => ({
      type: 'bearer token' as const,
      token: sim.token,
    }));
    const gateway = gatewayWith(credential, isStatic);

    await gateway.listClaims('shop');
    await gateway.readClaim('shop', 'none');
    await gateway.readLease('shop', 'none');

    expect(credential).toHaveBeenCalledTimes(credentialCalls);
  });

  it('presents an x509 client certificate, which the cluster maps to CN and O, for reads, writes and watches', async () => {
    const { cert, key } = sim.issueClientCertificate({
      user: 'pvc-pruner',
      groups: ['pruners'],
    });
    const gateway = gatewayWith(
      async () => ({ type: 'x509 client certificate', cert, key }),
      false,
    );
    sim.clearRequests();

    await expect(gateway.listClaims('shop')).resolves.toEqual([]);
    await gateway.readLease('shop', 'none');
    const stop = await gateway.watchOne(
      'persistentvolumeclaims',
      { namespace: 'shop', name: 'x' },
      undefined,
      () => undefined,
      () => undefined,
    );
    stop();

    const seen = sim
      .requests()
      .map(r => [r.verb, r.resource, r.user, r.status]);
    expect(seen).toEqual([
      ['list', 'persistentvolumeclaims', 'pvc-pruner', 200],
      ['get', 'leases', 'pvc-pruner', 404],
      ['watch', 'persistentvolumeclaims', 'pvc-pruner', 200],
    ]);
  });

  it('sends no credential for anonymous (kubectl proxy), and the cluster says who is refused', async () => {
    const gateway = gatewayWith(async () => ({ type: 'anonymous' }), true);

    await expect(gateway.listClaims('shop')).rejects.toMatchObject({
      statusCode: 401,
    });
  });
});
