import { NotFoundError } from '@backstage/errors';
import { ClusterRegistry, ClusterTarget } from './ClusterRegistry';
import { ClusterRequestError, KubeGateway } from './KubeGateway';

/** One KubeGateway per configured cluster, made on first use. */
export class KubeGateways {
  private readonly gateways = new Map<string, KubeGateway>();

  constructor(
    private readonly clusters: ClusterRegistry,
    private readonly timeoutMs: number,
  ) {}

  list(): ClusterTarget[] {
    return this.clusters.list();
  }

  /** The gateway for a cluster: NotFoundError for an unknown name, ClusterRequestError for an unusable one. */
  for(cluster: string): KubeGateway {
    const target = this.clusters.get(cluster);
    if (!target)
      throw new NotFoundError(`Cluster "${cluster}" is not configured`);
    if (target.unavailable || !target.kubeConfig) {
      throw new ClusterRequestError(
        cluster,
        `cluster "${cluster}" is unavailable: ${
          target.unavailable ?? 'not configured'
        }`,
      );
    }
    let gateway = this.gateways.get(cluster);
    if (!gateway) {
      gateway = new KubeGateway(cluster, target.kubeConfig(), this.timeoutMs);
      this.gateways.set(cluster, gateway);
    }
    return gateway;
  }
}
