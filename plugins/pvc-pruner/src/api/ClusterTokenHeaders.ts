import type { KubernetesAuthProvidersApi } from '@backstage/plugin-kubernetes-react';

/** A cluster as `GET /v1/clusters` lists it. */
export interface ClusterAuthInfo {
  name: string;
  authProvider: string;
  /** For client-side providers: the key of kubernetesAuthProvidersApi (`google`, `aks`, `oidc.<tokenProvider>`). */
  userTokenKey?: string;
}

/** The clusters are asked for again after this long, so clusters added to the catalog are found. */
const CLUSTERS_CACHE_MS = 60_000;
const HEADER_KUBERNETES_AUTH = 'Backstage-Kubernetes-Authorization';

/**
 * The headers that carry the user's own tokens for clusters of client-side
 * providers (google, oidc, aks), as Backstage's Kubernetes proxy client sends
 * them: `Backstage-Kubernetes-Authorization-<provider>[-<oidcTokenProvider>]`,
 * each token from kubernetesAuthProvidersApi (which asks the user to sign in
 * when needed). A provider the user cannot get a token from is left out: the
 * backend then reports that cluster as needing a sign-in, and the others
 * still answer.
 */
export class ClusterTokenHeaders {
  private clusters?: { at: number; items: Promise<ClusterAuthInfo[]> };

  constructor(
    private readonly listClusters: () => Promise<ClusterAuthInfo[]>,
    private readonly kubernetesAuthProvidersApi?: KubernetesAuthProvidersApi,
  ) {}

  async headers(cluster?: string): Promise<Record<string, string>> {
    if (!this.kubernetesAuthProvidersApi) return {};
    const clusters = (await this.cachedClusters()).filter(
      c => c.userTokenKey && (!cluster || c.name === cluster),
    );
    const keys = [...new Set(clusters.map(c => c.userTokenKey!))];
    const entries = await Promise.all(
      keys.map(async key => {
        try {
          const { token } =
            await this.kubernetesAuthProvidersApi!.getCredentials(key);
          return token
            ? ([
                `${HEADER_KUBERNETES_AUTH}-${key.replace('.', '-')}`,
                token,
              ] as const)
            : undefined;
        } catch {
          return undefined;
        }
      }),
    );
    return Object.fromEntries(entries.filter(e => e !== undefined));
  }

  private cachedClusters(): Promise<ClusterAuthInfo[]> {
    if (!this.clusters || Date.now() - this.clusters.at > CLUSTERS_CACHE_MS) {
      const items = this.listClusters();
      this.clusters = { at: Date.now(), items };
      items.catch(() => {
        if (this.clusters?.items === items) this.clusters = undefined;
      });
    }
    return this.clusters.items;
  }
}
