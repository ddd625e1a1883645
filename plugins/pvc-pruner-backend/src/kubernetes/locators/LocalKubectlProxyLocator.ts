import { lookup } from 'node:dns/promises';
import { ANNOTATION_KUBERNETES_AUTH_PROVIDER } from '@backstage/plugin-kubernetes-common';
import type { ClusterDetails } from '@backstage/plugin-kubernetes-node';
import { ClusterLocator } from './ClusterLocator';

/**
 * `type: localKubectlProxy`: `kubectl proxy` on port 8001 as cluster "local",
 * with localhost resolved IPv4 first (kubectl proxy listens on 127.0.0.1),
 * as upstream's LocalKubectlProxyClusterLocator does.
 */
export class LocalKubectlProxyLocator implements ClusterLocator {
  readonly type = 'localKubectlProxy';
  private readonly address = lookup('localhost', { verbatim: false });

  constructor(private readonly port = 8001) {}

  async getClusters(): Promise<ClusterDetails[]> {
    const { address } = await this.address;
    const host = address.includes(':') ? `[${address}]` : address;
    return [
      {
        name: 'local',
        url: `http://${host}:${this.port}`,
        authMetadata: {
          [ANNOTATION_KUBERNETES_AUTH_PROVIDER]: 'localKubectlProxy',
        },
        skipMetricsLookup: true,
      },
    ];
  }
}
