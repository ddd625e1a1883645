import { LocalKubectlProxyLocator } from './LocalKubectlProxyLocator';

describe('LocalKubectlProxyLocator', () => {
  it('is kubectl proxy on localhost:8001, IPv4 first, as cluster "local" without credentials', async () => {
    await expect(new LocalKubectlProxyLocator().getClusters()).resolves.toEqual(
      [
        {
          name: 'local',
          url: 'http://127.0.0.1:8001',
          authMetadata: { 'kubernetes.io/auth-provider': 'localKubectlProxy' },
          skipMetricsLookup: true,
        },
      ],
    );
  });
});
