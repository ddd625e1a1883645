import { AuthService, LoggerService } from '@backstage/backend-plugin-api';
import { CATALOG_FILTER_EXISTS } from '@backstage/catalog-client';
import { Entity } from '@backstage/catalog-model';
import { Config } from '@backstage/config';
import { CatalogService } from '@backstage/plugin-catalog-node';
import {
  ANNOTATION_KUBERNETES_API_SERVER,
  ANNOTATION_KUBERNETES_API_SERVER_CA,
  ANNOTATION_KUBERNETES_AUTH_PROVIDER,
  ANNOTATION_KUBERNETES_DASHBOARD_APP,
  ANNOTATION_KUBERNETES_DASHBOARD_PARAMETERS,
  ANNOTATION_KUBERNETES_DASHBOARD_URL,
  ANNOTATION_KUBERNETES_SKIP_METRICS_LOOKUP,
  ANNOTATION_KUBERNETES_SKIP_TLS_VERIFY,
} from '@backstage/plugin-kubernetes-common';
import type {
  AuthMetadata,
  ClusterDetails,
} from '@backstage/plugin-kubernetes-node';
import { JsonObject } from '@backstage/types';
import { ClusterLocator } from './ClusterLocator';
import {
  CatalogLocatorSafety,
  validateClusterApiServerUrl,
} from './validateClusterApiServerUrl';

/** How long a read of the catalog's clusters is reused; a cluster added to the catalog appears after at most this. */
export const CATALOG_CLUSTERS_CACHE_MS = 5000;

/** Every `kubernetes.io/*` annotation but a token, as upstream passes them to the strategies. */
function authMetadataOf(annotations: Record<string, string>): AuthMetadata {
  return Object.fromEntries(
    Object.entries(annotations).filter(
      ([key]) =>
        key.startsWith('kubernetes.io/') && key !== 'serviceAccountToken',
    ),
  );
}

function dashboardParametersOf(value: string | undefined) {
  if (!value) return undefined;
  try {
    const parsed = JSON.parse(value);
    return typeof parsed === 'object' &&
      parsed !== null &&
      !Array.isArray(parsed)
      ? (parsed as JsonObject)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `type: catalog`: Resource entities of `spec.type: kubernetes-cluster` with
 * the api-server, certificate-authority and auth-provider annotations, as
 * upstream's CatalogClusterLocator reads them (serviceAccount clusters and
 * URLs failing its SSRF check are skipped with a warning). The catalog is
 * read with the plugin's own credentials, again after a few seconds, so
 * clusters added to the catalog appear without a restart.
 */
export class CatalogClusterLocator implements ClusterLocator {
  readonly type = 'catalog';
  private cached?: { at: number; clusters: Promise<ClusterDetails[]> };

  constructor(
    private readonly deps: {
      catalog: CatalogService;
      auth: AuthService;
      logger: LoggerService;
    },
    private readonly options: CatalogLocatorSafety & { cacheMs?: number } = {},
  ) {}

  static fromConfig(
    config: Config,
    deps: CatalogClusterLocator['deps'],
  ): CatalogClusterLocator {
    return new CatalogClusterLocator(deps, {
      dangerouslyAllowClusterUrls: config.getOptionalStringArray(
        'dangerouslyAllowClusterUrls',
      ),
      dangerouslyAllowSkipTLSVerify: config.getOptionalBoolean(
        'dangerouslyAllowSkipTLSVerify',
      ),
    });
  }

  getClusters(): Promise<ClusterDetails[]> {
    const maxAge = this.options.cacheMs ?? CATALOG_CLUSTERS_CACHE_MS;
    if (!this.cached || Date.now() - this.cached.at >= maxAge) {
      const clusters = this.read();
      this.cached = { at: Date.now(), clusters };
      clusters.catch(() => {
        if (this.cached?.clusters === clusters) this.cached = undefined;
      });
    }
    return this.cached.clusters;
  }

  private async read(): Promise<ClusterDetails[]> {
    const { items } = await this.deps.catalog.getEntities(
      {
        filter: [
          {
            kind: 'Resource',
            'spec.type': 'kubernetes-cluster',
            [`metadata.annotations.${ANNOTATION_KUBERNETES_API_SERVER}`]:
              CATALOG_FILTER_EXISTS,
            [`metadata.annotations.${ANNOTATION_KUBERNETES_API_SERVER_CA}`]:
              CATALOG_FILTER_EXISTS,
            [`metadata.annotations.${ANNOTATION_KUBERNETES_AUTH_PROVIDER}`]:
              CATALOG_FILTER_EXISTS,
          },
        ],
      },
      { credentials: await this.deps.auth.getOwnServiceCredentials() },
    );
    const clusters: ClusterDetails[] = [];
    for (const entity of items) {
      const details = await this.toClusterDetails(entity);
      if (details) clusters.push(details);
    }
    return clusters;
  }

  private async toClusterDetails(
    entity: Entity,
  ): Promise<ClusterDetails | undefined> {
    const name = entity.metadata.name;
    const annotations = entity.metadata.annotations;
    const ignore = (why: string) => {
      this.deps.logger.warn(
        `Ignoring kubernetes-cluster Resource "${name}"${why}`,
      );
      return undefined;
    };
    if (!annotations) return ignore(' without annotations');
    if (annotations[ANNOTATION_KUBERNETES_AUTH_PROVIDER] === 'serviceAccount')
      return ignore(
        ': catalog cluster locator does not support the serviceAccount auth provider',
      );
    const url = annotations[ANNOTATION_KUBERNETES_API_SERVER];
    try {
      await validateClusterApiServerUrl(url, this.options);
    } catch (e) {
      return ignore(`: ${(e as Error).message}`);
    }
    return {
      name,
      title: entity.metadata.title,
      url,
      authMetadata: authMetadataOf(annotations),
      caData: annotations[ANNOTATION_KUBERNETES_API_SERVER_CA],
      skipMetricsLookup:
        annotations[ANNOTATION_KUBERNETES_SKIP_METRICS_LOOKUP] === 'true',
      skipTLSVerify:
        (this.options.dangerouslyAllowSkipTLSVerify ?? false) &&
        annotations[ANNOTATION_KUBERNETES_SKIP_TLS_VERIFY] === 'true',
      dashboardUrl: annotations[ANNOTATION_KUBERNETES_DASHBOARD_URL],
      dashboardApp: annotations[ANNOTATION_KUBERNETES_DASHBOARD_APP],
      dashboardParameters: dashboardParametersOf(
        annotations[ANNOTATION_KUBERNETES_DASHBOARD_PARAMETERS],
      ),
    };
  }
}
