import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { ClusterAuth } from './auth';
import { ClusterRegistry } from './ClusterRegistry';

function registry(kubernetes: object) {
  const config = new ConfigReader({ kubernetes });
  const logger = mockServices.logger.mock();
  return {
    logger,
    clusters: ClusterRegistry.fromConfig({
      config,
      logger,
      catalog: catalogServiceMock({ entities: [] }),
      auth: mockServices.auth(),
      clusterAuth: ClusterAuth.create({ config, logger }),
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
});
