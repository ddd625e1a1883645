import { mockServices } from '@backstage/backend-test-utils';
import { Entity } from '@backstage/catalog-model';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { CatalogClusterLocator } from './CatalogClusterLocator';

function cluster(
  name: string,
  annotations: Record<string, string>,
  spec: Record<string, string> = { type: 'kubernetes-cluster' },
  kind = 'Resource',
): Entity {
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind,
    metadata: {
      name,
      namespace: 'default',
      title: `${name} cluster`,
      annotations: {
        'kubernetes.io/api-server': `https://${name}.example.com`,
        'kubernetes.io/api-server-certificate-authority': 'Q0E=',
        'kubernetes.io/auth-provider': 'oidc',
        'kubernetes.io/oidc-token-provider': 'okta',
        ...annotations,
      },
    },
    spec: { owner: 'platform', ...spec },
  };
}

function withoutAnnotation(entity: Entity, key: string): Entity {
  delete entity.metadata.annotations![key];
  return entity;
}

function locatorOver(
  entities: Entity[],
  options: ConstructorParameters<typeof CatalogClusterLocator>[1] = {},
) {
  const catalog = catalogServiceMock({ entities });
  const logger = mockServices.logger.mock();
  const auth = mockServices.auth();
  const locator = new CatalogClusterLocator(
    { catalog, auth, logger },
    { cacheMs: 0, ...options },
  );
  return { locator, catalog, logger };
}

describe('CatalogClusterLocator', () => {
  it('reads kubernetes-cluster Resources and their kubernetes.io/* annotations as upstream does', async () => {
    const { locator } = locatorOver(
      [
        cluster('warehouse', {
          'kubernetes.io/skip-metrics-lookup': 'true',
          'kubernetes.io/dashboard-url': 'https://dash.example.com',
          'kubernetes.io/dashboard-app': 'standard',
          'kubernetes.io/dashboard-parameters': '{"a":1}',
          'kubernetes.io/skip-tls-verify': 'true',
          'backstage.io/managed-by-location': 'url:https://x',
        }),
      ],
      // No DNS in tests: example.com names are exempt from the resolution check.
      { dangerouslyAllowClusterUrls: ['*.example.com'] },
    );

    await expect(locator.getClusters()).resolves.toEqual([
      {
        name: 'warehouse',
        title: 'warehouse cluster',
        url: 'https://warehouse.example.com',
        caData: 'Q0E=',
        authMetadata: {
          'kubernetes.io/api-server': 'https://warehouse.example.com',
          'kubernetes.io/api-server-certificate-authority': 'Q0E=',
          'kubernetes.io/auth-provider': 'oidc',
          'kubernetes.io/oidc-token-provider': 'okta',
          'kubernetes.io/skip-metrics-lookup': 'true',
          'kubernetes.io/dashboard-url': 'https://dash.example.com',
          'kubernetes.io/dashboard-app': 'standard',
          'kubernetes.io/dashboard-parameters': '{"a":1}',
          'kubernetes.io/skip-tls-verify': 'true',
        },
        skipMetricsLookup: true,
        // Only with dangerouslyAllowSkipTLSVerify.
        skipTLSVerify: false,
        dashboardUrl: 'https://dash.example.com',
        dashboardApp: 'standard',
        dashboardParameters: { a: 1 },
      },
    ]);
  });

  it('skips what upstream skips: other kinds and types, missing annotations, serviceAccount clusters, URLs failing the SSRF check', async () => {
    const { locator, logger } = locatorOver([
      cluster('component', {}, { type: 'kubernetes-cluster' }, 'Component'),
      cluster('database', {}, { type: 'database' }),
      withoutAnnotation(
        cluster('no-ca', { 'kubernetes.io/api-server': 'https://8.8.4.4' }),
        'kubernetes.io/api-server-certificate-authority',
      ),
      cluster('sa', { 'kubernetes.io/auth-provider': 'serviceAccount' }),
      cluster('private', { 'kubernetes.io/api-server': 'https://10.0.0.1' }),
      cluster('plain', { 'kubernetes.io/api-server': 'http://8.8.8.8' }),
      cluster('with-password', {
        'kubernetes.io/api-server': 'https://u:p@8.8.8.8',
      }),
      cluster('public', { 'kubernetes.io/api-server': 'https://8.8.8.8' }),
    ]);

    const names = (await locator.getClusters()).map(c => c.name);

    expect(names).toEqual(['public']);
    expect(logger.warn.mock.calls.map(c => c[0])).toEqual([
      'Ignoring kubernetes-cluster Resource "sa": catalog cluster locator does not support the serviceAccount auth provider',
      'Ignoring kubernetes-cluster Resource "private": Kubernetes cluster API server URL must not use a non-public IP address',
      'Ignoring kubernetes-cluster Resource "plain": Kubernetes cluster API server URL must use the HTTPS scheme',
      'Ignoring kubernetes-cluster Resource "with-password": Kubernetes cluster API server URL must not contain credentials',
    ]);
  });

  it('lets dangerouslyAllowClusterUrls hosts use http and private addresses, and dangerouslyAllowSkipTLSVerify honour skip-tls-verify', async () => {
    const { locator } = locatorOver(
      [
        cluster('local', {
          'kubernetes.io/api-server': 'http://127.0.0.1:6443',
          'kubernetes.io/skip-tls-verify': 'true',
        }),
      ],
      {
        dangerouslyAllowClusterUrls: ['127.0.0.1'],
        dangerouslyAllowSkipTLSVerify: true,
      },
    );

    await expect(locator.getClusters()).resolves.toMatchObject([
      { name: 'local', url: 'http://127.0.0.1:6443', skipTLSVerify: true },
    ]);
  });

  it('finds a cluster added to the catalog later, without a restart, once its short cache has passed', async () => {
    const entities = [cluster('first', {})];
    const catalog = catalogServiceMock({ entities });
    const locator = new CatalogClusterLocator(
      {
        catalog: {
          ...catalog,
          getEntities: (request, options) =>
            catalogServiceMock({ entities }).getEntities(request, options),
        } as typeof catalog,
        auth: mockServices.auth(),
        logger: mockServices.logger.mock(),
      },
      { cacheMs: 50, dangerouslyAllowClusterUrls: ['*.example.com'] },
    );
    expect((await locator.getClusters()).map(c => c.name)).toEqual(['first']);

    entities.push(cluster('second', {}));

    expect((await locator.getClusters()).map(c => c.name)).toEqual(['first']);
    await new Promise(r => setTimeout(r, 60));
    expect((await locator.getClusters()).map(c => c.name)).toEqual([
      'first',
      'second',
    ]);
  });

  it("reads the catalog with the plugin's own service credentials", async () => {
    const { locator, catalog } = locatorOver([]);
    const getEntities = jest.spyOn(catalog, 'getEntities');

    await locator.getClusters();

    expect(getEntities.mock.calls[0][1]).toMatchObject({
      credentials: { principal: { type: 'service', subject: 'plugin:test' } },
    });
  });

  describe('the AWS annotations, which upstream trusts', () => {
    const AWS = {
      'kubernetes.io/auth-provider': 'aws',
      'kubernetes.io/aws-assume-role': 'arn:aws:iam::123456789012:role/admin',
      'kubernetes.io/aws-external-id': 'ext',
      'kubernetes.io/aws-account-id': '123456789012',
      'kubernetes.io/x-k8s-aws-id': 'prod-eks',
    };

    it('are ignored by default, with a warning once per Resource naming them', async () => {
      const { locator, logger } = locatorOver(
        [cluster('eks', AWS), cluster('plain', {})],
        { dangerouslyAllowClusterUrls: ['*.example.com'] },
      );

      const [eks] = await locator.getClusters();
      await locator.getClusters();

      expect(eks.authMetadata).toEqual({
        'kubernetes.io/api-server': 'https://eks.example.com',
        'kubernetes.io/api-server-certificate-authority': 'Q0E=',
        'kubernetes.io/auth-provider': 'aws',
        'kubernetes.io/oidc-token-provider': 'okta',
      });
      expect(logger.warn.mock.calls.map(c => c[0])).toEqual([
        "pvc-pruner: ignoring kubernetes.io/aws-account-id, kubernetes.io/aws-assume-role, kubernetes.io/aws-external-id, kubernetes.io/x-k8s-aws-id on kubernetes-cluster Resource resource:default/eks: from the catalog they would let its author choose the AWS role or account the backend signs with, or the EKS cluster its token is for. Configure such clusters in app-config (type: config), or set pvcPruner.catalogClusters.allowAwsAnnotations if every author of kubernetes-cluster Resources is trusted with the backend's AWS credentials",
      ]);
    });

    it('reach the strategy with pvcPruner.catalogClusters.allowAwsAnnotations, as upstream', async () => {
      const { locator, logger } = locatorOver([cluster('eks', AWS)], {
        dangerouslyAllowClusterUrls: ['*.example.com'],
        allowAwsAnnotations: true,
      });

      const [eks] = await locator.getClusters();

      expect(eks.authMetadata).toMatchObject(AWS);
      expect(logger.warn).not.toHaveBeenCalled();
    });
  });

  it('says which Resource each cluster came from', async () => {
    const { locator } = locatorOver([cluster('warehouse', {})], {
      dangerouslyAllowClusterUrls: ['*.example.com'],
    });

    const [warehouse] = await locator.getClusters();

    expect(locator.sourceOf(warehouse)).toBe('resource:default/warehouse');
  });
});
