import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import type { ClusterDetails } from '@backstage/plugin-kubernetes-node';
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
});
