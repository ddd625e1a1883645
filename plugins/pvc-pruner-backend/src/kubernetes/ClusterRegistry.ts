import {
  AuthService,
  LoggerService,
  RootConfigService,
} from '@backstage/backend-plugin-api';
import { ServiceUnavailableError } from '@backstage/errors';
import { CatalogService } from '@backstage/plugin-catalog-node';
import type { ClusterDetails } from '@backstage/plugin-kubernetes-node';
import { authProviderOf, ClusterAuth } from './auth';
import { LocatedCluster, locatedCluster } from './LocatedCluster';
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
  /** `pvcPruner.catalogClusters`. */
  catalogClusters?: { allowAwsAnnotations?: boolean };
}

/** Refusals already logged, so a refused Resource is logged once, not on every request. */
const MAX_WARNED = 10_000;

/**
 * The clusters of Backstage's own Kubernetes configuration
 * (`kubernetes.clusterLocatorMethods`: config, catalog, localKubectlProxy,
 * gke), so platform teams configure them once. As upstream, a failing
 * locator fails the lookup unless `kubernetes.clusterLocatorContinueOnError`
 * is set, and duplicate names across configured locators are logged.
 *
 * Unlike upstream, a name is taken only once where the catalog is involved:
 * whoever writes a catalog Resource must not stand in for a cluster the
 * platform configured (a prune, and a user's token, go to the cluster of the
 * name asked for). A `kubernetes-cluster` Resource named like a configured
 * cluster (config, gke, localKubectlProxy) is refused, and so are Resources
 * that share a name with each other, each with a warning naming both.
 */
export class ClusterRegistry {
  private readonly warned = new Set<string>();
  /** Each locator's details, located, for as long as the locator hands out the same object. */
  private readonly located = new WeakMap<ClusterDetails, LocatedCluster>();

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
          return CatalogClusterLocator.fromConfig(
            method,
            deps,
            deps.catalogClusters,
          );
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
  async list(): Promise<LocatedCluster[]> {
    const results = await Promise.allSettled(
      this.locators.map(l => l.getClusters()),
    );
    const located: LocatedCluster[] = [];
    results.forEach((result, i) => {
      const locator = this.locators[i];
      const what = `cluster locator #${i + 1} (${locator.type})`;
      if (result.status === 'rejected') {
        const message = `${what} failed: ${
          (result.reason as Error)?.message ?? result.reason
        }`;
        if (!this.continueOnError) throw new ServiceUnavailableError(message);
        this.logger.error(`pvc-pruner: ${message}`);
        return;
      }
      for (const details of result.value)
        located.push(this.locate(details, locator, i));
    });
    const fromCatalog = (c: LocatedCluster) => c.locatorType === 'catalog';
    const configuredNames = new Map<string, string>();
    for (const { name, origin } of located.filter(c => !fromCatalog(c))) {
      if (configuredNames.has(name))
        this.logger.warn(`pvc-pruner: duplicate cluster name '${name}'`);
      else configuredNames.set(name, origin);
    }
    const refused = this.refusedFromCatalog(
      located.filter(fromCatalog),
      configuredNames,
    );
    return located.filter(c => !refused.has(c));
  }

  /** The cluster of this name. */
  async get(name: string): Promise<LocatedCluster | undefined> {
    return (await this.list()).find(c => c.name === name);
  }

  private locate(
    details: ClusterDetails,
    locator: ClusterLocator,
    index: number,
  ): LocatedCluster {
    const known = this.located.get(details);
    if (known) return known;
    const source = locator.sourceOf?.(details);
    const cluster = locatedCluster(details, {
      origin: `kubernetes.clusterLocatorMethods[${index}] (${locator.type})${
        source ? ` Resource ${source}` : ''
      }`,
      locatorType: locator.type,
    });
    this.located.set(details, cluster);
    return cluster;
  }

  /** The catalog's clusters whose name a configured cluster or another Resource has. */
  private refusedFromCatalog(
    catalog: LocatedCluster[],
    configuredNames: Map<string, string>,
  ): Set<LocatedCluster> {
    const byName = new Map<string, LocatedCluster[]>();
    for (const cluster of catalog)
      byName.set(cluster.name, [...(byName.get(cluster.name) ?? []), cluster]);
    const refused = new Set<LocatedCluster>();
    for (const cluster of catalog) {
      const configuredOrigin = configuredNames.get(cluster.name);
      const namesakes = byName.get(cluster.name)!;
      if (configuredOrigin) {
        this.warnOnce(
          `pvc-pruner: ignoring the ${cluster.origin}: its name "${cluster.name}" is that of the cluster from ${configuredOrigin}, and a catalog entity cannot stand for a configured cluster; rename the Resource`,
        );
      } else if (namesakes.length > 1) {
        this.warnOnce(
          `pvc-pruner: ignoring the kubernetes-cluster Resources named "${
            cluster.name
          }" (${namesakes
            .map(c => c.origin)
            .join(
              ', ',
            )}): a cluster name must stand for one cluster; rename all but one`,
        );
      } else continue;
      refused.add(cluster);
    }
    return refused;
  }

  private warnOnce(message: string) {
    if (this.warned.has(message)) return;
    if (this.warned.size >= MAX_WARNED) this.warned.clear();
    this.warned.add(message);
    this.logger.warn(message);
  }
}
