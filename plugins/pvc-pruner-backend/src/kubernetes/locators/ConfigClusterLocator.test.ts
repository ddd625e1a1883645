import { ConfigReader } from '@backstage/config';
import { mockServices } from '@backstage/backend-test-utils';
import { ClusterAuth } from '../auth';
import { ConfigClusterLocator } from './ConfigClusterLocator';

const auth = ClusterAuth.create({
  config: new ConfigReader({}),
  logger: mockServices.logger.mock(),
});

function locate(clusters: unknown[]) {
  return ConfigClusterLocator.fromConfig(
    new ConfigReader({ type: 'config', clusters } as any),
    auth.strategy,
    p => auth.knows(p),
  ).getClusters();
}

describe('ConfigClusterLocator', () => {
  it('reads every field upstream reads, with its defaults', async () => {
    await expect(
      locate([
        {
          name: 'eks',
          title: 'EKS production',
          url: 'https://eks.example.com',
          authProvider: 'aws',
          assumeRole: 'arn:aws:iam::1:role/pruner',
          externalId: 'ext-1',
          caFile: '/etc/eks-ca.pem',
          skipMetricsLookup: true,
          dashboardUrl: 'https://console.aws.amazon.com',
          dashboardApp: 'eks',
          dashboardParameters: { region: 'eu-west-1' },
          customResources: [
            {
              group: 'argoproj.io',
              apiVersion: 'v1alpha1',
              plural: 'rollouts',
            },
          ],
        },
        {
          name: 'corp',
          url: 'https://corp.example.com',
          authProvider: 'oidc',
          oidcTokenProvider: 'okta',
        },
        {
          name: 'prod',
          url: 'https://prod.example.com',
          authMetadata: {
            'kubernetes.io/auth-provider': 'serviceAccount',
            serviceAccountToken: 'from-auth-metadata',
          },
          caData: 'Q0E=',
        },
      ]),
    ).resolves.toEqual([
      {
        name: 'eks',
        title: 'EKS production',
        url: 'https://eks.example.com',
        skipTLSVerify: false,
        skipMetricsLookup: true,
        caData: undefined,
        caFile: '/etc/eks-ca.pem',
        authMetadata: {
          'kubernetes.io/auth-provider': 'aws',
          'kubernetes.io/aws-assume-role': 'arn:aws:iam::1:role/pruner',
          'kubernetes.io/aws-external-id': 'ext-1',
        },
        customResources: [
          { group: 'argoproj.io', apiVersion: 'v1alpha1', plural: 'rollouts' },
        ],
        dashboardUrl: 'https://console.aws.amazon.com',
        dashboardApp: 'eks',
        dashboardParameters: { region: 'eu-west-1' },
      },
      {
        name: 'corp',
        url: 'https://corp.example.com',
        skipTLSVerify: false,
        skipMetricsLookup: false,
        caData: undefined,
        caFile: undefined,
        authMetadata: {
          'kubernetes.io/auth-provider': 'oidc',
          'kubernetes.io/oidc-token-provider': 'okta',
        },
      },
      {
        name: 'prod',
        url: 'https://prod.example.com',
        skipTLSVerify: false,
        skipMetricsLookup: false,
        caData: 'Q0E=',
        caFile: undefined,
        authMetadata: {
          'kubernetes.io/auth-provider': 'serviceAccount',
          serviceAccountToken: 'from-auth-metadata',
        },
      },
    ]);
  });

  it.each([
    [
      'a cluster without an auth provider',
      [{ name: 'a', url: 'https://a' }],
      "cluster 'a' has no auth provider configured; this must be specified via the 'authProvider' or 'authMetadata.kubernetes.io/auth-provider' parameter",
    ],
    [
      'two clusters of one name',
      [
        { name: 'a', url: 'https://a', authProvider: 'aws' },
        { name: 'a', url: 'https://b', authProvider: 'aws' },
      ],
      "Duplicate cluster name 'a'",
    ],
    [
      'an oidc cluster without a token provider',
      [{ name: 'a', url: 'https://a', authProvider: 'oidc' }],
      "Invalid cluster 'a': Must specify a token provider for 'oidc' strategy",
    ],
  ])(
    'fails at start, as upstream, for %s',
    async (_what, clusters, message) => {
      expect(() =>
        ConfigClusterLocator.fromConfig(
          new ConfigReader({ type: 'config', clusters } as any),
          auth.strategy,
          p => auth.knows(p),
        ),
      ).toThrow(message);
    },
  );

  it('keeps a cluster whose provider has no strategy here (the Kubernetes backend may have a custom one)', async () => {
    await expect(
      locate([{ name: 'p', url: 'https://p', authProvider: 'pinniped' }]),
    ).resolves.toMatchObject([
      {
        name: 'p',
        authMetadata: { 'kubernetes.io/auth-provider': 'pinniped' },
      },
    ]);
  });
});
