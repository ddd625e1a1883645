import { AuthService, LoggerService } from '@backstage/backend-plugin-api';
import { CATALOG_FILTER_EXISTS } from '@backstage/catalog-client';
import { Entity, stringifyEntityRef } from '@backstage/catalog-model';
import { Config } from '@backstage/config';
import { CatalogService } from '@backstage/plugin-catalog-node';
import {
  ANNOTATION_KUBERNETES_API_SERVER,
  ANNOTATION_KUBERNETES_API_SERVER_CA,
  ANNOTATION_KUBERNETES_AUTH_PROVIDER,
  ANNOTATION_KUBERNETES_AWS_ACCOUNT_ID,
  ANNOTATION_KUBERNETES_AWS_ASSUME_ROLE,
  ANNOTATION_KUBERNETES_AWS_CLUSTER_ID,
  ANNOTATION_KUBERNETES_AWS_EXTERNAL_ID,
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

/**
 * The annotations with which upstream's AwsIamStrategy picks the backend's
 * AWS credentials (an account's, a role to assume and its external id) and
 * the EKS cluster its token is signed for. From the catalog, they would let
 * whoever writes a Resource make the backend assume any role it can reach,
 * or send a token for another cluster to the Resource's URL.
 */
export const CATALOG_AWS_ANNOTATIONS = [
  ANNOTATION_KUBERNETES_AWS_ACCOUNT_ID,
  ANNOTATION_KUBERNETES_AWS_ASSUME_ROLE,
  ANNOTATION_KUBERNETES_AWS_EXTERNAL_ID,
  ANNOTATION_KUBERNETES_AWS_CLUSTER_ID,
];

/** Resources already warned about, so a warning is logged once per Resource, not every few seconds. */
const MAX_WARNED = 10_000;

/**
 * Every `kubernetes.io/*` annotation but a token, as upstream passes them to
 * the strategies; without the AWS ones unless they are allowed.
 */
function authMetadataOf(
  annotations: Record<string, string>,
  allowAws: boolean,
): AuthMetadata {
  return Object.fromEntries(
    Object.entries(annotations).filter(
      ([key]) =>
        key.startsWith('kubernetes.io/') &&
        key !== 'serviceAccountToken' &&
        (allowAws || !CATALOG_AWS_ANNOTATIONS.includes(key)),
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

/** Options of `type: catalog`: upstream's, and pvc-pruner's `pvcPruner.catalogClusters`. */
export interface CatalogLocatorOptions extends CatalogLocatorSafety {
  cacheMs?: number;
  /** Pass the AWS annotations ({@link CATALOG_AWS_ANNOTATIONS}) to the strategies, as upstream does. */
  allowAwsAnnotations?: boolean;
}

/**
 * `type: catalog`: Resource entities of `spec.type: kubernetes-cluster` with
 * the api-server, certificate-authority and auth-provider annotations, as
 * upstream's CatalogClusterLocator reads them (serviceAccount clusters and
 * URLs failing its SSRF check are skipped with a warning). Unlike upstream,
 * the AWS annotations are ignored (with a warning, once per Resource) unless
 * `pvcPruner.catalogClusters.allowAwsAnnotations` is set. The catalog is read
 * with the plugin's own credentials, again after a few seconds, so clusters
 * added to the catalog appear without a restart.
 */
export class CatalogClusterLocator implements ClusterLocator {
  readonly type = 'catalog';
  private cached?: { at: number; clusters: Promise<ClusterDetails[]> };
  private readonly sources = new WeakMap<ClusterDetails, string>();
  private readonly warned = new Set<string>();

  constructor(
    private readonly deps: {
      catalog: CatalogService;
      auth: AuthService;
      logger: LoggerService;
    },
    private readonly options: CatalogLocatorOptions = {},
  ) {}

  /** `config` is the locator's entry of `kubernetes.clusterLocatorMethods`. */
  static fromConfig(
    config: Config,
    deps: CatalogClusterLocator['deps'],
    options: Pick<CatalogLocatorOptions, 'allowAwsAnnotations'> = {},
  ): CatalogClusterLocator {
    return new CatalogClusterLocator(deps, {
      dangerouslyAllowClusterUrls: config.getOptionalStringArray(
        'dangerouslyAllowClusterUrls',
      ),
      dangerouslyAllowSkipTLSVerify: config.getOptionalBoolean(
        'dangerouslyAllowSkipTLSVerify',
      ),
      ...options,
    });
  }

  /** The entity ref of the Resource a cluster was read from. */
  sourceOf(cluster: ClusterDetails): string | undefined {
    return this.sources.get(cluster);
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
      if (!details) continue;
      this.sources.set(details, stringifyEntityRef(entity));
      clusters.push(details);
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
    const allowAws = this.options.allowAwsAnnotations ?? false;
    if (!allowAws) this.warnOfAwsAnnotations(entity, annotations);
    return {
      name,
      title: entity.metadata.title,
      url,
      authMetadata: authMetadataOf(annotations, allowAws),
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

  private warnOfAwsAnnotations(
    entity: Entity,
    annotations: Record<string, string>,
  ) {
    const present = CATALOG_AWS_ANNOTATIONS.filter(a =>
      Object.hasOwn(annotations, a),
    );
    const ref = stringifyEntityRef(entity);
    if (present.length === 0 || this.warned.has(ref)) return;
    if (this.warned.size >= MAX_WARNED) this.warned.clear();
    this.warned.add(ref);
    this.deps.logger.warn(
      `pvc-pruner: ignoring ${present.join(
        ', ',
      )} on kubernetes-cluster Resource ${ref}: from the catalog they would let its author choose the AWS role or account the backend signs with, or the EKS cluster its token is for. Configure such clusters in app-config (type: config), or set pvcPruner.catalogClusters.allowAwsAnnotations if every author of kubernetes-cluster Resources is trusted with the backend's AWS credentials`,
    );
  }
}
