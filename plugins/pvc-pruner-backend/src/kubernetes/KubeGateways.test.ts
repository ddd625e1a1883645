import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import type {
  AuthenticationStrategy,
  ClusterDetails,
} from '@backstage/plugin-kubernetes-node';
import { startFakeApiServer } from '../__testUtils__/fakeApiServer';
import { ClusterAuth } from './auth';
import { ClusterRegistry } from './ClusterRegistry';
import { KubeGateways } from './KubeGateways';

const cluster = (
  name: string,
  authMetadata: Record<string, string>,
): ClusterDetails => ({
  name,
  url: `https://${name}.example.com`,
  authMetadata,
});

const CLUSTERS = [
  cluster('corp', {
    'kubernetes.io/auth-provider': 'oidc',
    'kubernetes.io/oidc-token-provider': 'okta',
  }),
  cluster('gke', { 'kubernetes.io/auth-provider': 'google' }),
  cluster('eks', { 'kubernetes.io/auth-provider': 'aws' }),
  cluster('pinniped', { 'kubernetes.io/auth-provider': 'pinniped' }),
];

function gateways() {
  const logger = mockServices.logger.mock();
  return new KubeGateways(
    ClusterRegistry.of(CLUSTERS, logger),
    ClusterAuth.create({ config: new ConfigReader({}), logger }),
    1000,
  );
}

const emptyList = JSON.stringify({ metadata: {}, items: [] });

describe('KubeGateways', () => {
  it('asks a user without a token for a client-side cluster to sign in, naming the provider', async () => {
    await expect(gateways().for('corp', {})).rejects.toMatchObject({
      name: 'ClusterRequestError',
      statusCode: 401,
      message:
        'cluster "corp" authenticates each user with oidc.okta, and this request carried no such token; sign in to that provider and reload',
    });
    await expect(
      gateways().for('corp', { oidc: { other: 'token' } }),
    ).rejects.toMatchObject({ statusCode: 401 });
  });

  it('gives each request of a client-side cluster its own gateway (the user token is the request’s), and shares the others’', async () => {
    const all = gateways();
    const a = await all.for('gke', { google: 'token-a' });
    const b = await all.for('gke', { google: 'token-b' });
    expect(a).not.toBe(b);
    await expect(all.for('eks')).resolves.toBe(await all.for('eks'));
  });

  it('reports a cluster whose provider has no strategy as unavailable, saying how to add one', async () => {
    await expect(gateways().for('pinniped')).rejects.toMatchObject({
      name: 'ClusterRequestError',
      message:
        'cluster "pinniped" uses authProvider "pinniped", which pvc-pruner has no strategy for; add one with pvcPrunerAuthStrategyExtensionPoint, as for the Kubernetes backend',
    });
  });

  it('answers NotFoundError for a cluster no locator knows', async () => {
    await expect(gateways().for('nope')).rejects.toMatchObject({
      name: 'NotFoundError',
    });
  });

  describe('clusters are told apart by more than their name', () => {
    it('sends nothing for a cluster to its old URL once its URL changed: its gateway is new', async () => {
      const [a, b] = await Promise.all([
        startFakeApiServer((_req, res) => res.end(emptyList)),
        startFakeApiServer((_req, res) => res.end(emptyList)),
      ]);
      try {
        const logger = mockServices.logger.mock();
        const located: ClusterDetails[] = [
          cluster('warehouse', {
            'kubernetes.io/auth-provider': 'localKubectlProxy',
          }),
        ];
        located[0].url = a.url;
        const all = new KubeGateways(
          ClusterRegistry.of(located, logger),
          ClusterAuth.create({ config: new ConfigReader({}), logger }),
          1000,
        );
        const before = await all.for('warehouse');
        await before.listClaims('shop');
        expect(await all.for('warehouse')).toBe(before);

        located[0] = { ...located[0], url: b.url };
        const after = await all.for('warehouse');
        await after.listClaims('shop');

        expect(after).not.toBe(before);
        expect(a.requests).toHaveLength(1);
        expect(b.requests).toHaveLength(1);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });
  });

  describe("a request's tokens", () => {
    const TOKENS = {
      google: 'google-token',
      aks: 'aks-token',
      oidc: { okta: 'okta-token', microsoft: 'microsoft-token' },
      pinniped: 'pinniped-token',
    };

    it.each([
      [
        'google',
        { 'kubernetes.io/auth-provider': 'google' },
        { google: 'google-token' },
      ],
      [
        'oidc (okta)',
        {
          'kubernetes.io/auth-provider': 'oidc',
          'kubernetes.io/oidc-token-provider': 'okta',
        },
        { oidc: { okta: 'okta-token' } },
      ],
      [
        'custom (pinniped)',
        { 'kubernetes.io/auth-provider': 'pinniped' },
        { pinniped: 'pinniped-token' },
      ],
      ['aws (which reads none)', { 'kubernetes.io/auth-provider': 'aws' }, {}],
    ])(
      'reach a %s cluster only with the token that cluster reads',
      async (_what, authMetadata, expected) => {
        const fake = await startFakeApiServer((_req, res) =>
          res.end(emptyList),
        );
        try {
          const seen: unknown[] = [];
          const recording: AuthenticationStrategy = {
            getCredential: async (_cluster, requestAuth) => {
              seen.push(requestAuth);
              return { type: 'bearer token', token: 'from-strategy' };
            },
            validateCluster: () => [],
            presentAuthMetadata: () => ({}),
          };
          const logger = mockServices.logger.mock();
          const target = { ...cluster('target', authMetadata), url: fake.url };
          const all = new KubeGateways(
            ClusterRegistry.of([target], logger),
            ClusterAuth.create({
              config: new ConfigReader({}),
              logger,
              extraStrategies: new Map(
                ['google', 'oidc', 'pinniped', 'aws'].map(p => [p, recording]),
              ),
            }),
            1000,
          );

          await (await all.for('target', TOKENS)).listClaims('shop');

          expect(seen).toEqual([expected]);
        } finally {
          await fake.close();
        }
      },
    );
  });
});
