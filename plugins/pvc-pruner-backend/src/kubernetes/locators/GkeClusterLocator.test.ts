import { ConfigReader } from '@backstage/config';
import { mockServices } from '@backstage/backend-test-utils';
import { GkeCluster, GkeClusterLocator } from './GkeClusterLocator';

function clientOf(clusters: GkeCluster[] | Error) {
  const listClusters = jest.fn(async (_request: { parent: string }) => {
    if (clusters instanceof Error) throw clusters;
    return [{ clusters }] as [{ clusters: GkeCluster[] }];
  });
  return { listClusters };
}

const CLUSTERS: GkeCluster[] = [
  { name: 'shop', endpoint: '10.0.0.1', resourceLabels: { team: 'checkout' } },
  { name: 'ml', endpoint: '10.0.0.2', resourceLabels: { team: 'ml' } },
  {
    name: 'dns-only',
    endpoint: '10.0.0.3',
    resourceLabels: { team: 'checkout' },
    controlPlaneEndpointsConfig: {
      dnsEndpointConfig: { endpoint: 'gke-123.europe-west1.gke.goog' },
    },
  },
];

describe('GkeClusterLocator', () => {
  it('lists the project/region with ClusterManagerClient and keeps the clusters with matching labels', async () => {
    const client = clientOf(CLUSTERS);
    const locator = GkeClusterLocator.fromConfig(
      new ConfigReader({
        type: 'gke',
        projectId: 'acme',
        region: 'europe-west1',
        authProvider: 'googleServiceAccount',
        skipMetricsLookup: true,
        exposeDashboard: true,
        matchingResourceLabels: [{ key: 'team', value: 'checkout' }],
      }),
      { logger: mockServices.logger.mock(), client },
    );

    await expect(locator.getClusters()).resolves.toEqual([
      {
        name: 'shop',
        url: 'https://10.0.0.1',
        authMetadata: {
          'kubernetes.io/auth-provider': 'googleServiceAccount',
        },
        skipTLSVerify: false,
        skipMetricsLookup: true,
        dashboardApp: 'gke',
        dashboardParameters: {
          projectId: 'acme',
          region: 'europe-west1',
          clusterName: 'shop',
        },
      },
      expect.objectContaining({ name: 'dns-only', url: 'https://10.0.0.3' }),
    ]);
    expect(client.listClusters).toHaveBeenCalledWith({
      parent: 'projects/acme/locations/europe-west1',
    });
  });

  it('defaults as upstream: every region, authProvider google, public endpoints, no dashboard', async () => {
    const client = clientOf(CLUSTERS.slice(0, 1));
    const locator = GkeClusterLocator.fromConfig(
      new ConfigReader({ type: 'gke', projectId: 'acme' }),
      { logger: mockServices.logger.mock(), client },
    );

    await expect(locator.getClusters()).resolves.toEqual([
      {
        name: 'shop',
        url: 'https://10.0.0.1',
        authMetadata: { 'kubernetes.io/auth-provider': 'google' },
        skipTLSVerify: false,
        skipMetricsLookup: false,
      },
    ]);
    expect(client.listClusters).toHaveBeenCalledWith({
      parent: 'projects/acme/locations/-',
    });
  });

  it('uses the DNS endpoint with endpointType dns, else the public IP', async () => {
    const locator = GkeClusterLocator.fromConfig(
      new ConfigReader({ type: 'gke', projectId: 'acme', endpointType: 'dns' }),
      { logger: mockServices.logger.mock(), client: clientOf(CLUSTERS) },
    );

    const urls = (await locator.getClusters()).map(c => c.url);

    expect(urls).toEqual([
      'https://10.0.0.1',
      'https://10.0.0.2',
      'https://gke-123.europe-west1.gke.goog',
    ]);
  });

  it('refuses an unknown endpointType at start', () => {
    expect(() =>
      GkeClusterLocator.fromConfig(
        new ConfigReader({ type: 'gke', projectId: 'a', endpointType: 'x' }),
        { logger: mockServices.logger.mock(), client: clientOf([]) },
      ),
    ).toThrow("Invalid endpointType 'x', must be one of: public, dns");
  });

  it('asks Google again once the list is older than the refresh interval, keeping the last list when that fails', async () => {
    const client = clientOf(CLUSTERS.slice(0, 1));
    const locator = GkeClusterLocator.fromConfig(
      new ConfigReader({ type: 'gke', projectId: 'acme' }),
      { logger: mockServices.logger.mock(), client, refreshMs: 0 },
    );
    await locator.getClusters();
    client.listClusters.mockRejectedValueOnce(new Error('quota exceeded'));

    await expect(locator.getClusters()).resolves.toMatchObject([
      { name: 'shop' },
    ]);
    expect(client.listClusters).toHaveBeenCalledTimes(2);
  });

  it('names the project and region when the first listing fails', async () => {
    const locator = GkeClusterLocator.fromConfig(
      new ConfigReader({ type: 'gke', projectId: 'acme', region: 'eu' }),
      {
        logger: mockServices.logger.mock(),
        client: clientOf(new Error('permission denied')),
      },
    );

    await expect(locator.getClusters()).rejects.toThrow(
      'There was an error retrieving clusters from GKE for projectId=acme region=eu; caused by Error: permission denied',
    );
  });
});
