import {
  createBackendModule,
  ExtensionPoint,
} from '@backstage/backend-plugin-api';
import { ServiceAccountStrategy } from '@backstage/plugin-kubernetes-backend';
import {
  AuthenticationStrategy,
  kubernetesAuthStrategyExtensionPoint,
} from '@backstage/plugin-kubernetes-node';
import { pvcPrunerAuthStrategyExtensionPoint } from '../src';

/**
 * The demo's `x509` auth provider: the client certificate start.ts had the
 * warehouse cluster's CA sign, from PVC_PRUNER_DEMO_WAREHOUSE_CLIENT_CERT and
 * _KEY (base64 PEM). Backstage's Kubernetes backend has no built-in x509
 * provider; a custom strategy like this one (or Pinniped's) is added to both
 * the Kubernetes backend and pvc-pruner, so both reach the same clusters.
 */
class ClientCertificateStrategy implements AuthenticationStrategy {
  async getCredential() {
    const decode = (name: string) =>
      Buffer.from(process.env[name] ?? '', 'base64').toString('utf8');
    return {
      type: 'x509 client certificate' as const,
      cert: decode('PVC_PRUNER_DEMO_WAREHOUSE_CLIENT_CERT'),
      key: decode('PVC_PRUNER_DEMO_WAREHOUSE_CLIENT_KEY'),
    };
  }
  validateCluster() {
    return [];
  }
  presentAuthMetadata() {
    return {};
  }
}

/**
 * Strategies added through the extension point replace the defaults (in the
 * Kubernetes backend and in pvc-pruner alike), so the first cluster's
 * serviceAccount provider is added again beside `x509`.
 */
const strategies = {
  serviceAccount: new ServiceAccountStrategy(),
  x509: new ClientCertificateStrategy(),
};

/** A module that adds the providers to a plugin's auth strategy extension point. */
const addStrategiesTo = (
  pluginId: string,
  extensionPoint: ExtensionPoint<{
    addAuthStrategy(key: string, strategy: AuthenticationStrategy): void;
  }>,
) =>
  createBackendModule({
    pluginId,
    moduleId: 'demo-x509',
    register(reg) {
      reg.registerInit({
        deps: { extension: extensionPoint },
        async init({ extension }) {
          for (const [key, strategy] of Object.entries(strategies))
            extension.addAuthStrategy(key, strategy);
        },
      });
    },
  });

/** Adds the providers to Backstage's Kubernetes backend (the Kubernetes tab). */
export const kubernetesClientCertificateModule = addStrategiesTo(
  'kubernetes',
  kubernetesAuthStrategyExtensionPoint,
);

/** Adds the same providers to pvc-pruner. */
export const pvcPrunerClientCertificateModule = addStrategiesTo(
  'pvc-pruner',
  pvcPrunerAuthStrategyExtensionPoint,
);
