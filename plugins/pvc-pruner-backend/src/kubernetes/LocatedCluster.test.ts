import type { ClusterDetails } from '@backstage/plugin-kubernetes-node';
import { locatedCluster } from './LocatedCluster';

const CATALOG = {
  origin:
    'kubernetes.clusterLocatorMethods[1] (catalog) Resource resource:default/warehouse',
  locatorType: 'catalog',
};

const warehouse: ClusterDetails = {
  name: 'warehouse',
  title: 'Warehouse',
  url: 'https://warehouse.example.com',
  caData: 'Q0E=',
  authMetadata: {
    'kubernetes.io/auth-provider': 'oidc',
    'kubernetes.io/oidc-token-provider': 'okta',
  },
};

const identityOf = (
  details: ClusterDetails,
  from: { origin: string; locatorType: string } = CATALOG,
) => locatedCluster(details, from).identity;

describe('locatedCluster', () => {
  it.each<[string, ClusterDetails | undefined, typeof CATALOG | undefined]>([
    [
      'another URL',
      { ...warehouse, url: 'https://elsewhere.example.com' },
      undefined,
    ],
    ['another CA', { ...warehouse, caData: 'T1RIRVI=' }, undefined],
    [
      'a CA file instead',
      { ...warehouse, caData: undefined, caFile: '/ca.pem' },
      undefined,
    ],
    ['TLS verification off', { ...warehouse, skipTLSVerify: true }, undefined],
    [
      'another auth provider',
      {
        ...warehouse,
        authMetadata: { 'kubernetes.io/auth-provider': 'google' },
      },
      undefined,
    ],
    [
      'another OIDC token provider',
      {
        ...warehouse,
        authMetadata: {
          ...warehouse.authMetadata,
          'kubernetes.io/oidc-token-provider': 'microsoft',
        },
      },
      undefined,
    ],
    ['another name', { ...warehouse, name: 'warehouse-2' }, undefined],
    [
      'the same details from another Resource',
      undefined,
      {
        ...CATALOG,
        origin:
          'kubernetes.clusterLocatorMethods[1] (catalog) Resource resource:team-b/warehouse',
      },
    ],
    [
      'the same details from config',
      undefined,
      {
        origin: 'kubernetes.clusterLocatorMethods[0] (config)',
        locatorType: 'config',
      },
    ],
  ])('is another cluster with %s', (_what, details, from) => {
    expect(identityOf(details ?? warehouse, from ?? CATALOG)).not.toBe(
      identityOf(warehouse),
    );
  });

  it('is the same cluster with another title, dashboard, or its auth metadata in another order', () => {
    const same: ClusterDetails = {
      ...warehouse,
      title: 'Renamed',
      dashboardUrl: 'https://dash.example.com',
      authMetadata: {
        'kubernetes.io/oidc-token-provider': 'okta',
        'kubernetes.io/auth-provider': 'oidc',
      },
    };
    expect(identityOf(same)).toBe(identityOf(warehouse));
  });

  it('carries no credential of the details in the identity', () => {
    const withToken: ClusterDetails = {
      ...warehouse,
      authMetadata: {
        'kubernetes.io/auth-provider': 'serviceAccount',
        serviceAccountToken: 'secret-token',
      },
    };
    const located = locatedCluster(withToken, CATALOG);
    expect(located.identity).not.toContain('secret-token');
    expect(located.place).toBe(`${CATALOG.origin}\nwarehouse`);
  });
});
