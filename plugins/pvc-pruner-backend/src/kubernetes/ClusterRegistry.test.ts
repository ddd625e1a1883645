import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import { Entity } from '@backstage/catalog-model';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { ClusterAuth } from './auth';
import { ClusterRegistry } from './ClusterRegistry';

function registry(
  kubernetes: object,
  entities: Entity[] = [],
  catalogClusters?: { allowAwsAnnotations?: boolean },
) {
  const config = new ConfigReader({ kubernetes });
  const logger = mockServices.logger.mock();
  return {
    logger,
    clusters: ClusterRegistry.fromConfig({
      config,
      logger,
      catalog: catalogServiceMock({ entities }),
      auth: mockServices.auth(),
      clusterAuth: ClusterAuth.create({ config, logger }),
      catalogClusters,
      gkeClient: {
        listClusters: async () => {
          throw new Error('PERMISSION_DENIED');
        },
      },
    }),
  };
}

const METHODS = [
  {
    type: 'config',
    clusters: [
      { name: 'prod', url: 'https://prod.example.com', authProvider: 'aws' },
    ],
  },
  { type: 'gke', projectId: 'acme' },
];

describe('ClusterRegistry', () => {
  it('fails with 503 naming the locator that failed, as upstream fails the lookup', async () => {
    await expect(
      registry({ clusterLocatorMethods: METHODS }).clusters.list(),
    ).rejects.toMatchObject({
      name: 'ServiceUnavailableError',
      message:
        'cluster locator #2 (gke) failed: There was an error retrieving clusters from GKE for projectId=acme region=-; caused by Error: PERMISSION_DENIED',
    });
  });

  it('keeps the other locators’ clusters with clusterLocatorContinueOnError, and logs the failure', async () => {
    const { clusters, logger } = registry({
      clusterLocatorMethods: METHODS,
      clusterLocatorContinueOnError: true,
    });

    await expect(clusters.list()).resolves.toMatchObject([{ name: 'prod' }]);
    expect(logger.error).toHaveBeenCalledWith(
      expect.stringContaining('cluster locator #2 (gke) failed'),
    );
  });

  it('refuses an unknown locator type at start, as upstream', () => {
    expect(() =>
      registry({ clusterLocatorMethods: [{ type: 'rancher' }] }),
    ).toThrow('Unsupported kubernetes.clusterLocatorMethods: "rancher"');
  });

  it('logs clusters of one name from two locators', async () => {
    const { clusters, logger } = registry({
      clusterLocatorMethods: [METHODS[0], METHODS[0]],
    });

    await clusters.list();

    expect(logger.warn).toHaveBeenCalledWith(
      "pvc-pruner: duplicate cluster name 'prod'",
    );
  });

  describe('a name stands for one cluster where the catalog is involved', () => {
    /** A kubernetes-cluster Resource at a public address (no DNS needed). */
    const resource = (name: string, namespace = 'default'): Entity => ({
      apiVersion: 'backstage.io/v1alpha1',
      kind: 'Resource',
      metadata: {
        name,
        namespace,
        annotations: {
          'kubernetes.io/api-server': 'https://8.8.8.8',
          'kubernetes.io/api-server-certificate-authority': 'Q0E=',
          'kubernetes.io/auth-provider': 'oidc',
          'kubernetes.io/oidc-token-provider': 'okta',
        },
      },
      spec: { type: 'kubernetes-cluster', owner: 'anyone' },
    });
    const LOCATORS = [
      {
        type: 'config',
        clusters: [
          {
            name: 'prod',
            url: 'https://prod.example.com',
            authProvider: 'aws',
          },
        ],
      },
      { type: 'localKubectlProxy' },
      { type: 'catalog' },
    ];

    it('refuses a Resource named like a configured cluster, naming both, and keeps the configured one', async () => {
      const { clusters, logger } = registry(
        { clusterLocatorMethods: LOCATORS },
        [resource('prod'), resource('local'), resource('warehouse')],
      );

      const listed = await clusters.list();

      expect(listed.map(c => [c.name, c.origin])).toEqual([
        ['prod', 'kubernetes.clusterLocatorMethods[0] (config)'],
        ['local', 'kubernetes.clusterLocatorMethods[1] (localKubectlProxy)'],
        [
          'warehouse',
          'kubernetes.clusterLocatorMethods[2] (catalog) Resource resource:default/warehouse',
        ],
      ]);
      await expect(clusters.get('prod')).resolves.toMatchObject({
        url: 'https://prod.example.com',
      });
      expect(logger.warn.mock.calls.map(c => c[0])).toEqual([
        'pvc-pruner: ignoring the kubernetes.clusterLocatorMethods[2] (catalog) Resource resource:default/prod: its name "prod" is that of the cluster from kubernetes.clusterLocatorMethods[0] (config), and a catalog entity cannot stand for a configured cluster; rename the Resource',
        'pvc-pruner: ignoring the kubernetes.clusterLocatorMethods[2] (catalog) Resource resource:default/local: its name "local" is that of the cluster from kubernetes.clusterLocatorMethods[1] (localKubectlProxy), and a catalog entity cannot stand for a configured cluster; rename the Resource',
      ]);
    });

    it('refuses Resources that share a name with each other, as either could be the one asked for', async () => {
      const { clusters, logger } = registry(
        { clusterLocatorMethods: LOCATORS },
        [resource('warehouse'), resource('warehouse', 'team-b')],
      );

      expect((await clusters.list()).map(c => c.name)).toEqual([
        'prod',
        'local',
      ]);
      expect(logger.warn).toHaveBeenCalledWith(
        'pvc-pruner: ignoring the kubernetes-cluster Resources named "warehouse" (kubernetes.clusterLocatorMethods[2] (catalog) Resource resource:default/warehouse, kubernetes.clusterLocatorMethods[2] (catalog) Resource resource:team-b/warehouse): a cluster name must stand for one cluster; rename all but one',
      );
    });

    it('warns once per refused Resource, not on every lookup', async () => {
      const { clusters, logger } = registry(
        { clusterLocatorMethods: LOCATORS },
        [resource('prod')],
      );

      await clusters.list();
      await clusters.list();
      await clusters.get('prod');

      expect(logger.warn).toHaveBeenCalledTimes(1);
    });

    it.each([
      [undefined, undefined],
      [{ allowAwsAnnotations: true }, 'arn:aws:iam::123456789012:role/admin'],
    ])(
      'passes on a catalog Resource’s aws-assume-role only with pvcPruner.catalogClusters.allowAwsAnnotations (given %j)',
      async (catalogClusters, assumeRole) => {
        const eks = resource('eks');
        Object.assign(eks.metadata.annotations!, {
          'kubernetes.io/auth-provider': 'aws',
          'kubernetes.io/aws-assume-role':
            'arn:aws:iam::123456789012:role/admin',
        });
        const { clusters } = registry(
          { clusterLocatorMethods: [{ type: 'catalog' }] },
          [eks],
          catalogClusters,
        );

        const [located] = await clusters.list();

        expect(located.authMetadata['kubernetes.io/aws-assume-role']).toBe(
          assumeRole,
        );
      },
    );
  });
});
