import {
  LoggerService,
  RootConfigService,
} from '@backstage/backend-plugin-api';
import { Config } from '@backstage/config';
import { KubeConfig } from '@kubernetes/client-node';

/** A cluster from `kubernetes.clusterLocatorMethods`, as this plugin can reach it. */
export interface ClusterTarget {
  name: string;
  url: string;
  /** Why the plugin cannot use this cluster; reported instead of results. */
  unavailable?: string;
  /** Builds a client configuration; never serialised (it holds credentials). */
  kubeConfig?: () => KubeConfig;
}

const AUTH_PROVIDER_ANNOTATION = 'kubernetes.io/auth-provider';
const LOCAL_PROXY_URL = 'http://localhost:8001';

function kubeConfigFor(options: {
  name: string;
  url: string;
  token?: string;
  caData?: string;
  caFile?: string;
  skipTLSVerify: boolean;
}) {
  return () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: options.name,
          server: options.url,
          caData: options.caData,
          caFile: options.caFile,
          // client-node refuses plain http unless told there is no TLS to verify (kubectl proxy, local clusters).
          skipTLSVerify:
            options.skipTLSVerify || options.url.startsWith('http:'),
        },
      ],
      users: [
        {
          name: 'pvc-pruner',
          ...(options.token ? { token: options.token } : {}),
        },
      ],
      contexts: [
        { name: options.name, cluster: options.name, user: 'pvc-pruner' },
      ],
      currentContext: options.name,
    });
    return kc;
  };
}

function fromConfigCluster(c: Config, logger: LoggerService): ClusterTarget {
  const name = c.getString('name');
  const url = c.getString('url');
  const authMetadata = c.getOptionalConfig('authMetadata');
  const authProvider =
    c.getOptionalString('authProvider') ??
    authMetadata?.getOptionalString(AUTH_PROVIDER_ANNOTATION) ??
    'serviceAccount';
  if (authProvider !== 'serviceAccount') {
    logger.warn(
      `pvc-pruner: cluster "${name}" uses authProvider "${authProvider}", which pvc-pruner does not support (only "serviceAccount"); it will be reported as unavailable`,
    );
    return {
      name,
      url,
      unavailable: `authProvider "${authProvider}" is not supported by pvc-pruner; use "serviceAccount"`,
    };
  }
  const token =
    c.getOptionalString('serviceAccountToken') ??
    authMetadata?.getOptionalString('serviceAccountToken');
  if (!token) {
    logger.warn(
      `pvc-pruner: cluster "${name}" has no serviceAccountToken; it will be reported as unavailable`,
    );
    return {
      name,
      url,
      unavailable: 'no serviceAccountToken is configured for this cluster',
    };
  }
  return {
    name,
    url,
    kubeConfig: kubeConfigFor({
      name,
      url,
      token,
      caData: c.getOptionalString('caData'),
      caFile: c.getOptionalString('caFile'),
      skipTLSVerify: c.getOptionalBoolean('skipTLSVerify') ?? false,
    }),
  };
}

/**
 * The clusters of Backstage's own Kubernetes configuration
 * (`kubernetes.clusterLocatorMethods`), so platform teams configure them once.
 * Supports `type: config` with `authProvider: serviceAccount`, and
 * `type: localKubectlProxy`; anything else is logged and reported as unavailable.
 */
export class ClusterRegistry {
  private constructor(private readonly clusters: ClusterTarget[]) {}

  static fromConfig(
    config: RootConfigService,
    logger: LoggerService,
  ): ClusterRegistry {
    const clusters: ClusterTarget[] = [];
    for (const method of config.getOptionalConfigArray(
      'kubernetes.clusterLocatorMethods',
    ) ?? []) {
      const type = method.getString('type');
      if (type === 'config') {
        for (const c of method.getOptionalConfigArray('clusters') ?? [])
          clusters.push(fromConfigCluster(c, logger));
      } else if (type === 'localKubectlProxy') {
        clusters.push({
          name: 'local',
          url: LOCAL_PROXY_URL,
          kubeConfig: kubeConfigFor({
            name: 'local',
            url: LOCAL_PROXY_URL,
            skipTLSVerify: false,
          }),
        });
      } else {
        logger.warn(
          `pvc-pruner: cluster locator "${type}" is not supported (only "config" and "localKubectlProxy"); its clusters are not scanned`,
        );
        clusters.push({
          name: `${type} locator`,
          url: '',
          unavailable: `cluster locator "${type}" is not supported by pvc-pruner`,
        });
      }
    }
    if (clusters.length === 0)
      logger.warn(
        'pvc-pruner: no clusters in kubernetes.clusterLocatorMethods',
      );
    return new ClusterRegistry(clusters);
  }

  static of(clusters: ClusterTarget[]) {
    return new ClusterRegistry(clusters);
  }

  list(): ClusterTarget[] {
    return [...this.clusters];
  }

  get(name: string): ClusterTarget | undefined {
    return this.clusters.find(c => c.name === name);
  }
}
