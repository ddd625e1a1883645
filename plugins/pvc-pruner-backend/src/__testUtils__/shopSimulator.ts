import { KubeObject, KubeSim, KubeSimOptions, startKubeSim } from 'kube-sim';
import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import { WATCH_CACHE_TRIMMERS } from '../orphans/orphanRule';
import {
  ClusterAuth,
  ClusterCaches,
  ClusterConnection,
  ClusterRegistry,
  KubeGateway,
  KubeGateways,
} from '../kubernetes';

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
export async function startShopSimulator(
  options: Pick<KubeSimOptions, 'bookmarkIntervalMs'> = {},
): Promise<{
  sim: KubeSim;
  connection: ClusterConnection;
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
  const connection = connectionTo(sim);
  return {
    sim,
    connection,
    gateway: new KubeGateway('demo', connection, 5000),
  };
}

/**
 * Gateways to the simulator as the one configured cluster, "demo", of a
 * server-side provider (its admin token as a service account's): reads of
 * such a cluster may come from a watch cache.
 */
export function gatewaysTo(sim: KubeSim): KubeGateways {
  const logger = mockServices.logger.mock();
  return new KubeGateways(
    ClusterRegistry.of(
      [
        {
          name: 'demo',
          url: sim.url,
          caData: Buffer.from(sim.caCert!).toString('base64'),
          authMetadata: {
            'kubernetes.io/auth-provider': 'serviceAccount',
            serviceAccountToken: sim.token,
          },
        },
      ],
      logger,
    ),
    ClusterAuth.create({ config: new ConfigReader({}), logger }),
    5000,
  );
}

/** Watch caches with the demo cluster's started and synced (it throws otherwise); stop them after. */
export async function syncedDemoCaches(
  gateways: KubeGateways,
): Promise<ClusterCaches> {
  const caches = new ClusterCaches({
    trim: WATCH_CACHE_TRIMMERS,
    logger: mockServices.logger.mock(),
    syncWaitMs: 5000,
    timing: { minBackoffMs: 20, maxBackoffMs: 100, minWatchMs: 0 },
  });
  const [demo] = await gateways.list();
  const gateway = await gateways.for('demo');
  caches.ready(demo, gateway); // starts it
  if (!(await caches.whenReady(demo, gateway)))
    throw new Error('the watch cache of "demo" did not sync');
  return caches;
}
