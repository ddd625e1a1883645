import { existsSync } from 'node:fs';
import { NotFoundError } from '@backstage/errors';
import {
  ANNOTATION_KUBERNETES_OIDC_TOKEN_PROVIDER,
  KubernetesRequestAuth,
  SERVICEACCOUNT_CA_PATH,
} from '@backstage/plugin-kubernetes-common';
import type { ClusterDetails } from '@backstage/plugin-kubernetes-node';
import { KubeConfig } from '@kubernetes/client-node';
import { authProviderOf, ClusterAuth } from './auth';
import { caOf, ClusterConnection, ClusterEndpoint } from './ClusterConnection';
import { ClusterRegistry } from './ClusterRegistry';
import { KubeGateway } from './KubeGateway';
import { LocatedCluster } from './LocatedCluster';

/**
 * Where to reach a cluster. As upstream, a serviceAccount cluster without a
 * token, in a pod, is the pod's own cluster (in-cluster address and CA).
 */
function endpointOf(cluster: ClusterDetails): ClusterEndpoint {
  if (
    authProviderOf(cluster) === 'serviceAccount' &&
    !cluster.authMetadata.serviceAccountToken &&
    existsSync(SERVICEACCOUNT_CA_PATH)
  ) {
    const kc = new KubeConfig();
    kc.loadFromCluster();
    const inCluster = kc.getCurrentCluster()!;
    return {
      name: cluster.name,
      server: inCluster.server,
      ca: caOf({ caFile: inCluster.caFile }),
      skipTLSVerify: false,
    };
  }
  return {
    name: cluster.name,
    server: cluster.url.replace(/\/+$/, ''),
    ca: caOf(cluster),
    skipTLSVerify: cluster.skipTLSVerify ?? false,
  };
}

/**
 * Of the tokens a request carries, only the one this cluster's provider
 * reads (`google`, `aks`, its own `oidc` token provider's; a custom
 * provider's own key): a request that reads several clusters never hands
 * one cluster's strategy, and so its server, the token meant for another.
 */
export function requestAuthFor(
  cluster: ClusterDetails,
  requestAuth: KubernetesRequestAuth,
): KubernetesRequestAuth {
  const provider = authProviderOf(cluster);
  if (!provider || !Object.hasOwn(requestAuth, provider)) return {};
  const value = requestAuth[provider];
  if (provider !== 'oidc') return { [provider]: value };
  const tokenProvider =
    cluster.authMetadata[ANNOTATION_KUBERNETES_OIDC_TOKEN_PROVIDER];
  const tokens = value as Record<string, unknown> | undefined;
  return tokenProvider &&
    typeof tokens === 'object' &&
    tokens !== null &&
    Object.hasOwn(tokens, tokenProvider)
    ? ({
        oidc: { [tokenProvider]: tokens[tokenProvider] },
      } as KubernetesRequestAuth)
    : {};
}

/**
 * KubeGateways for the located clusters. Clusters reached with the plugin's
 * own credentials share one gateway per cluster identity (a cluster whose
 * URL, CA or credentials change gets a new one, and the old one is never
 * used again); clusters of client-side providers (google, oidc, aks) get a
 * gateway per request or job, carrying the user's token for that cluster
 * only, in memory only.
 */
export class KubeGateways {
  /** By the place a cluster was found (see LocatedCluster), with the identity it was built for. */
  private readonly shared = new Map<
    string,
    { identity: string; gateway: KubeGateway }
  >();

  constructor(
    private readonly clusters: ClusterRegistry,
    private readonly auth: ClusterAuth,
    private readonly timeoutMs: number,
  ) {}

  /** The located clusters; the shared gateways of clusters no longer located are let go. */
  async list(): Promise<LocatedCluster[]> {
    const clusters = await this.clusters.list();
    const places = new Set(clusters.map(c => c.place));
    for (const place of this.shared.keys())
      if (!places.has(place)) this.shared.delete(place);
    return clusters;
  }

  /**
   * The gateway for a cluster, by name: NotFoundError for an unknown one,
   * ClusterRequestError for one that cannot be used (no strategy, or no user
   * token for a client-side provider).
   */
  async for(
    cluster: string,
    requestAuth: KubernetesRequestAuth = {},
  ): Promise<KubeGateway> {
    const details = await this.clusters.get(cluster);
    if (!details)
      throw new NotFoundError(`Cluster "${cluster}" is not configured`);
    return this.forCluster(details, requestAuth);
  }

  /** The gateway for a located cluster; of `requestAuth`, only the token for this cluster is used. */
  forCluster(
    cluster: LocatedCluster,
    requestAuth: KubernetesRequestAuth = {},
  ): KubeGateway {
    const credential = this.auth.credentialSource(
      cluster,
      requestAuthFor(cluster, requestAuth),
    );
    const connection = () =>
      new ClusterConnection(
        endpointOf(cluster),
        credential,
        this.auth.isStatic(cluster),
      );
    if (this.auth.isClientSide(cluster)) {
      return new KubeGateway(cluster.name, connection(), this.timeoutMs, {
        userTokenProvider: authProviderOf(cluster),
      });
    }
    const known = this.shared.get(cluster.place);
    if (known?.identity === cluster.identity) return known.gateway;
    const gateway = new KubeGateway(cluster.name, connection(), this.timeoutMs);
    this.shared.set(cluster.place, { identity: cluster.identity, gateway });
    return gateway;
  }
}
