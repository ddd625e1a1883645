import { LoggerService } from '@backstage/backend-plugin-api';
import { Config } from '@backstage/config';
import { ForwardedError } from '@backstage/errors';
import { ANNOTATION_KUBERNETES_AUTH_PROVIDER } from '@backstage/plugin-kubernetes-common';
import type { ClusterDetails } from '@backstage/plugin-kubernetes-node';
import { ClusterLocator } from './ClusterLocator';

/** A GKE cluster as ClusterManagerClient.listClusters returns it: the fields the locator reads. */
export interface GkeCluster {
  name?: string | null;
  endpoint?: string | null;
  resourceLabels?: Record<string, string> | null;
  controlPlaneEndpointsConfig?: {
    dnsEndpointConfig?: { endpoint?: string | null } | null;
  } | null;
}

/** The part of `@google-cloud/container`'s ClusterManagerClient the locator uses; tests pass their own. */
export interface GkeClusterClient {
  listClusters(request: {
    parent: string;
  }): Promise<[{ clusters?: GkeCluster[] | null }, ...unknown[]]>;
}

/** Upstream refreshes GKE's list every hour. */
export const GKE_REFRESH_MS = 60 * 60 * 1000;

const ENDPOINT_TYPES = ['public', 'dns'] as const;

interface GkeOptions {
  projectId: string;
  region: string;
  authProvider: 'google' | 'googleServiceAccount';
  skipTLSVerify: boolean;
  skipMetricsLookup: boolean;
  exposeDashboard: boolean;
  matchingResourceLabels: { key: string; value: string }[];
  endpointType: (typeof ENDPOINT_TYPES)[number];
}

function readOptions(config: Config): GkeOptions {
  const endpointType = config.getOptionalString('endpointType') ?? 'public';
  if (!(ENDPOINT_TYPES as readonly string[]).includes(endpointType))
    throw new Error(
      `Invalid endpointType '${endpointType}', must be one of: ${ENDPOINT_TYPES.join(
        ', ',
      )}`,
    );
  return {
    projectId: config.getString('projectId'),
    region: config.getOptionalString('region') ?? '-',
    authProvider:
      config.getOptionalString('authProvider') === 'googleServiceAccount'
        ? 'googleServiceAccount'
        : 'google',
    skipTLSVerify: config.getOptionalBoolean('skipTLSVerify') ?? false,
    skipMetricsLookup: config.getOptionalBoolean('skipMetricsLookup') ?? false,
    exposeDashboard: config.getOptionalBoolean('exposeDashboard') ?? false,
    matchingResourceLabels:
      config.getOptionalConfigArray('matchingResourceLabels')?.map(l => ({
        key: l.getString('key'),
        value: l.getString('value'),
      })) ?? [],
    endpointType: endpointType as GkeOptions['endpointType'],
  };
}

/**
 * `type: gke`: the clusters of a Google Cloud project (and region), found
 * with ClusterManagerClient.listClusters and filtered by
 * `matchingResourceLabels`, as upstream's GkeClusterLocator does. The list is
 * refreshed when it is an hour old; a failed refresh keeps the last list.
 */
export class GkeClusterLocator implements ClusterLocator {
  readonly type = 'gke';
  private cached?: { at: number; clusters: ClusterDetails[] };
  private refreshing?: Promise<ClusterDetails[]>;

  private constructor(
    private readonly options: GkeOptions,
    private readonly client: GkeClusterClient,
    private readonly logger: LoggerService,
    private readonly refreshMs: number,
  ) {}

  static fromConfig(
    config: Config,
    deps: {
      logger: LoggerService;
      /** Defaults to `@google-cloud/container`'s ClusterManagerClient with Application Default Credentials. */
      client?: GkeClusterClient;
      refreshMs?: number;
    },
  ): GkeClusterLocator {
    const options = readOptions(config);
    return new GkeClusterLocator(
      options,
      deps.client ?? defaultClient(),
      deps.logger,
      deps.refreshMs ?? GKE_REFRESH_MS,
    );
  }

  async getClusters(): Promise<ClusterDetails[]> {
    if (this.cached && Date.now() - this.cached.at < this.refreshMs)
      return this.cached.clusters;
    this.refreshing ??= this.refresh().finally(() => {
      this.refreshing = undefined;
    });
    try {
      return await this.refreshing;
    } catch (e) {
      if (!this.cached) throw e;
      this.logger.warn(`${(e as Error).message}; keeping the last list`);
      return this.cached.clusters;
    }
  }

  private async refresh(): Promise<ClusterDetails[]> {
    const { projectId, region } = this.options;
    let response;
    try {
      [response] = await this.client.listClusters({
        parent: `projects/${projectId}/locations/${region}`,
      });
    } catch (e) {
      throw new ForwardedError(
        `There was an error retrieving clusters from GKE for projectId=${projectId} region=${region}`,
        e,
      );
    }
    const clusters = (response.clusters ?? [])
      .filter(c =>
        this.options.matchingResourceLabels.every(
          l => c.resourceLabels?.[l.key] === l.value,
        ),
      )
      .map(c => this.toClusterDetails(c));
    this.cached = { at: Date.now(), clusters };
    return clusters;
  }

  private toClusterDetails(cluster: GkeCluster): ClusterDetails {
    const { projectId, region, authProvider, exposeDashboard } = this.options;
    return {
      name: cluster.name ?? 'unknown',
      url: this.urlOf(cluster),
      authMetadata: { [ANNOTATION_KUBERNETES_AUTH_PROVIDER]: authProvider },
      skipTLSVerify: this.options.skipTLSVerify,
      skipMetricsLookup: this.options.skipMetricsLookup,
      ...(exposeDashboard
        ? {
            dashboardApp: 'gke',
            dashboardParameters: {
              projectId,
              region,
              clusterName: cluster.name ?? null,
            },
          }
        : {}),
    };
  }

  private urlOf(cluster: GkeCluster) {
    if (this.options.endpointType === 'dns') {
      const dns =
        cluster.controlPlaneEndpointsConfig?.dnsEndpointConfig?.endpoint;
      if (dns) return `https://${dns}`;
      this.logger.info(
        `Cluster '${
          cluster.name ?? 'unknown'
        }' has endpointType 'dns' configured but no DNS endpoint available, falling back to public IP`,
      );
    }
    return `https://${cluster.endpoint ?? ''}`;
  }
}

function defaultClient(): GkeClusterClient {
  // Loaded only when a gke locator is configured: the Google client is large.
  const { v1 } =
    require('@google-cloud/container') as typeof import('@google-cloud/container');
  return new v1.ClusterManagerClient({
    libName: 'backstage-plugin-pvc-pruner-backend.GkeClusterLocator',
  }) as unknown as GkeClusterClient;
}
