import { Config } from '@backstage/config';
import {
  ANNOTATION_KUBERNETES_AUTH_PROVIDER,
  ANNOTATION_KUBERNETES_AWS_ASSUME_ROLE,
  ANNOTATION_KUBERNETES_AWS_EXTERNAL_ID,
  ANNOTATION_KUBERNETES_OIDC_TOKEN_PROVIDER,
} from '@backstage/plugin-kubernetes-common';
import type {
  AuthenticationStrategy,
  AuthMetadata,
  ClusterDetails,
} from '@backstage/plugin-kubernetes-node';
import { ClusterLocator } from './ClusterLocator';

/** The auth metadata upstream reads from a cluster's own keys (serviceAccountToken, assumeRole, …). */
function authMetadataOf(c: Config): AuthMetadata {
  const serviceAccountToken = c.getOptionalString('serviceAccountToken');
  const assumeRole = c.getOptionalString('assumeRole');
  const externalId = c.getOptionalString('externalId');
  const oidcTokenProvider = c.getOptionalString('oidcTokenProvider');
  return {
    ...(serviceAccountToken && { serviceAccountToken }),
    ...(assumeRole && { [ANNOTATION_KUBERNETES_AWS_ASSUME_ROLE]: assumeRole }),
    ...(externalId && { [ANNOTATION_KUBERNETES_AWS_EXTERNAL_ID]: externalId }),
    ...(oidcTokenProvider && {
      [ANNOTATION_KUBERNETES_OIDC_TOKEN_PROVIDER]: oidcTokenProvider,
    }),
  };
}

/**
 * `type: config`: the clusters listed in app-config, read and validated as
 * upstream's ConfigClusterLocator does (duplicate names, a missing auth
 * provider and a strategy's validation errors fail at start). A cluster
 * whose authProvider has no strategy here is kept: it is reported as
 * unavailable when used, since the Kubernetes backend may have a custom
 * strategy pvc-pruner was not given.
 */
export class ConfigClusterLocator implements ClusterLocator {
  readonly type = 'config';

  private constructor(private readonly clusters: ClusterDetails[]) {}

  static fromConfig(
    config: Config,
    authStrategy: AuthenticationStrategy,
    knowsProvider: (authProvider: string) => boolean,
  ): ConfigClusterLocator {
    const names = new Set<string>();
    return new ConfigClusterLocator(
      config.getConfigArray('clusters').map(c => {
        const authMetadataBlock = c.getOptional<AuthMetadata>('authMetadata');
        const name = c.getString('name');
        if (names.has(name))
          throw new Error(`Duplicate cluster name '${name}'`);
        names.add(name);
        const authProvider =
          authMetadataBlock?.[ANNOTATION_KUBERNETES_AUTH_PROVIDER] ??
          c.getOptionalString('authProvider');
        if (!authProvider) {
          throw new Error(
            `cluster '${name}' has no auth provider configured; this must be specified via the 'authProvider' or 'authMetadata.${ANNOTATION_KUBERNETES_AUTH_PROVIDER}' parameter`,
          );
        }
        const title = c.getOptionalString('title');
        const details: ClusterDetails = {
          name,
          ...(title && { title }),
          url: c.getString('url'),
          skipTLSVerify: c.getOptionalBoolean('skipTLSVerify') ?? false,
          skipMetricsLookup: c.getOptionalBoolean('skipMetricsLookup') ?? false,
          caData: c.getOptionalString('caData'),
          caFile: c.getOptionalString('caFile'),
          authMetadata: {
            [ANNOTATION_KUBERNETES_AUTH_PROVIDER]: authProvider,
            ...authMetadataOf(c),
            ...authMetadataBlock,
          },
        };
        const customResources = c.getOptionalConfigArray('customResources');
        if (customResources) {
          details.customResources = customResources.map(cr => ({
            group: cr.getString('group'),
            apiVersion: cr.getString('apiVersion'),
            plural: cr.getString('plural'),
          }));
        }
        const dashboardUrl = c.getOptionalString('dashboardUrl');
        if (dashboardUrl) details.dashboardUrl = dashboardUrl;
        const dashboardApp = c.getOptionalString('dashboardApp');
        if (dashboardApp) details.dashboardApp = dashboardApp;
        if (c.has('dashboardParameters'))
          details.dashboardParameters = c.get('dashboardParameters');
        if (knowsProvider(authProvider)) {
          const errors = authStrategy.validateCluster(details.authMetadata);
          if (errors.length !== 0) {
            throw new Error(
              `Invalid cluster '${name}': ${errors
                .map(e => e.message)
                .join(', ')}`,
            );
          }
        }
        return details;
      }),
    );
  }

  async getClusters(): Promise<ClusterDetails[]> {
    return this.clusters;
  }
}
