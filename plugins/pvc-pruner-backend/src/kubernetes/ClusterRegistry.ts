import {
  AuthService,
  LoggerService,
  RootConfigService,
} from '@backstage/backend-plugin-api';
import { ServiceUnavailableError } from '@backstage/errors';
import { CatalogService } from '@backstage/plugin-catalog-node';
import type { ClusterDetails } from '@backstage/plugin-kubernetes-node';
import { authProviderOf, ClusterAuth } from './auth';
import {
  CatalogClusterLocator,
  ClusterLocator,
  ConfigClusterLocator,
  GkeClusterClient,
  GkeClusterLocator,
  LocalKubectlProxyLocator,
} from './locators';

/** What the registry needs to build the locators of `kubernetes.clusterLocatorMethods`. */
export interface ClusterRegistryDeps {
  config: RootConfigService;
  logger: LoggerService;
  catalog: CatalogService;
  auth: AuthService;
  clusterAuth: ClusterAuth;
  /** Replaces Google's ClusterManagerClient for `type: gke` (tests). */
  gkeClient?: GkeClusterClient;
}

/**
 * The clusters of Backstage's own Kubernetes configuration
 * (`kubernetes.clusterLocatorMethods`: config, catalog, localKubectlProxy,
 * gke), so platform teams configure them once. As upstream, a failing
 * locator fails the lookup unless `kubernetes.clusterLocatorContinueOnError`
 * is set, and duplicate names across locators are logged.
 */
export class ClusterRegistry {
  private constructor(
    private readonly locators: ClusterLocator[],
    private readonly logger: LoggerService,
    private readonly continueOnError: boolean,
  ) {}

  static fromConfig(deps: ClusterRegistryDeps): ClusterRegistry {
    const { config, logger, clusterAuth } = deps;
    const methods =
      config.getOptionalConfigArray('kubernetes.clusterLocatorMethods') ?? [];
    if (methods.length === 0)
      logger.warn(
        'pvc-pruner: no clusters in kubernetes.clusterLocatorMethods',
      );
    const locators = methods.map((method): ClusterLocator => {
      const type = method.getString('type');
      switch (type) {
        case 'config': {
          const locator = ConfigClusterLocator.fromConfig(
            method,
            clusterAuth.strategy,
            provider => clusterAuth.knows(provider),
          );
          void locator
            .getClusters()
            .then(clusters =>
              clusters
                .filter(c => !clusterAuth.knows(authProviderOf(c)))
                .forEach(c =>
                  logger.warn(
                    `pvc-pruner: cluster "${
                      c.name
                    }" uses authProvider "${authProviderOf(
                      c,
                    )}", which pvc-pruner has no strategy for; it is reported as unavailable`,
                  ),
                ),
            );
          return locator;
        }
        case 'catalog':
          return CatalogClusterLocator.fromConfig(method, deps);
        case 'localKubectlProxy':
          return new LocalKubectlProxyLocator();
        case 'gke':
          return GkeClusterLocator.fromConfig(method, {
            logger,
            client: deps.gkeClient,
          });
        default:
          throw new Error(
            `Unsupported kubernetes.clusterLocatorMethods: "${type}"`,
          );
      }
    });
    return new ClusterRegistry(
      locators,
      logger,
      config.getOptionalBoolean('kubernetes.clusterLocatorContinueOnError') ??
        false,
    );
  }

  /** A registry of fixed clusters (tests, benchmarks). */
  static of(clusters: ClusterDetails[], logger: LoggerService) {
    return new ClusterRegistry(
      [{ type: 'fixed', getClusters: async () => clusters }],
      logger,
      false,
    );
  }

  /** Every cluster now; a locator that fails is a ServiceUnavailableError naming it. */
  async list(): Promise<ClusterDetails[]> {
    const results = await Promise.allSettled(
      this.locators.map(l => l.getClusters()),
    );
    const clusters: ClusterDetails[] = [];
    results.forEach((result, i) => {
      const what = `cluster locator #${i + 1} (${this.locators[i].type})`;
      if (result.status === 'fulfilled') {
        clusters.push(...result.value);
        return;
      }
      const message = `${what} failed: ${
        (result.reason as Error)?.message ?? result.reason
      }`;
      if (!this.continueOnError) throw new ServiceUnavailableError(message);
      this.logger.error(`pvc-pruner: ${message}`);
    });
    const seen = new Set<string>();
    for (const { name } of clusters) {
      if (seen.has(name))
        this.logger.warn(`pvc-pruner: duplicate cluster name '${name}'`);
      seen.add(name);
    }
    return clusters;
  }

  async get(name: string): Promise<ClusterDetails | undefined> {
    return (await this.list()).find(c => c.name === name);
  }
}
