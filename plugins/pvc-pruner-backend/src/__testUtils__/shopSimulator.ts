import { KubeObject, KubeSim, startKubeSim } from 'kube-sim';
import { ClusterConnection, KubeGateway } from '../kubernetes';

/** A connection to the simulator with a bearer token (the admin token unless told). */
export function connectionTo(
  sim: KubeSim,
  token = sim.token,
  name = 'demo',
): ClusterConnection {
  return new ClusterConnection(
    { name, server: sim.url, ca: sim.caCert, skipTLSVerify: false },
    async () => ({ type: 'bearer token', token }),
    true,
  );
}

/**
 * A simulator over https with namespace `shop` and no controllers, and a
 * gateway to it as cluster "demo": the setup of the service tests that talk
 * to Kubernetes.
 */
export async function startShopSimulator(): Promise<{
  sim: KubeSim;
  connection: ClusterConnection;
  gateway: KubeGateway;
}> {
  const sim = await startKubeSim({
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
  const connection = connectionTo(sim);
  return {
    sim,
    connection,
    gateway: new KubeGateway('demo', connection, 5000),
  };
}
