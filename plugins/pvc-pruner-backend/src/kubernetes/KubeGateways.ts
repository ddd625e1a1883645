import { existsSync } from 'node:fs';
import { NotFoundError } from '@backstage/errors';
import {
  KubernetesRequestAuth,
  SERVICEACCOUNT_CA_PATH,
} from '@backstage/plugin-kubernetes-common';
import type { ClusterDetails } from '@backstage/plugin-kubernetes-node';
import { KubeConfig } from '@kubernetes/client-node';
import { authProviderOf, ClusterAuth } from './auth';
import { caOf, ClusterConnection, ClusterEndpoint } from './ClusterConnection';
import { ClusterRegistry } from './ClusterRegistry';
import { KubeGateway } from './KubeGateway';

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
 * KubeGateways for the located clusters. Clusters reached with the plugin's
 * own credentials share one gateway (rebuilt when the cluster's details
 * change); clusters of client-side providers (google, oidc, aks) get a
 * gateway per request or job, carrying the user's token in memory only.
 */
export class KubeGateways {
  private readonly shared = new Map<
    string,
    { details: string; gateway: KubeGateway }
  >();

  constructor(
    private readonly clusters: ClusterRegistry,
    private readonly auth: ClusterAuth,
    private readonly timeoutMs: number,
  ) {}

  list(): Promise<ClusterDetails[]> {
    return this.clusters.list();
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

  /** The gateway for located cluster details. */
  forCluster(
    cluster: ClusterDetails,
    requestAuth: KubernetesRequestAuth = {},
  ): KubeGateway {
    const credential = this.auth.credentialSource(cluster, requestAuth);
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
    const key = JSON.stringify(cluster);
    const known = this.shared.get(cluster.name);
    if (known?.details === key) return known.gateway;
    const gateway = new KubeGateway(cluster.name, connection(), this.timeoutMs);
    this.shared.set(cluster.name, { details: key, gateway });
    return gateway;
  }
}
