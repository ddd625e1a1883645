import { KubeConfig } from '@kubernetes/client-node';
import { KubeObject, KubeSim, KubeSimOptions, startKubeSim } from 'kube-sim';
import { KubeGateway } from '../kubernetes';

/**
 * A simulator over https with namespace `shop` and no controllers, and a
 * gateway to it as cluster "demo": the setup of the service tests that talk
 * to Kubernetes.
 */
export async function startShopSimulator(
  options: Pick<KubeSimOptions, 'bookmarkIntervalMs'> = {},
): Promise<{
  sim: KubeSim;
  kubeConfig: KubeConfig;
  gateway: KubeGateway;
}> {
  const sim = await startKubeSim({
    ...options,
    controllers: false,
    https: true,
    scenario: [
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'shop' },
      } as KubeObject,
    ],
  });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(sim.kubeconfig);
  return {
    sim,
    kubeConfig,
    gateway: new KubeGateway('demo', kubeConfig, 5000),
  };
}
