import { hostname } from 'node:os';
import {
  coreServices,
  createBackendPlugin,
  createExtensionPoint,
} from '@backstage/backend-plugin-api';
import type {
  AuthenticationStrategy,
  KubernetesAuthStrategyExtensionPoint,
} from '@backstage/plugin-kubernetes-node';
import { catalogServiceRef } from '@backstage/plugin-catalog-node';
import {
  PVC_PRUNER_PLUGIN_ID,
  pvcPrunerPermissions,
} from 'backstage-plugin-pvc-pruner-common';
import { readOptions } from './options';
import { createRouter } from './router';
import { PriceList } from './cost';
import { OrphanSightingStore, PruneJobStore } from './database';
import { FleetService } from './fleet';
import {
  InterruptedJobSweeper,
  JobEvents,
  LeaseLock,
  PruneJobs,
  PruneRunner,
  VolumeFollower,
} from './jobs';
import {
  ClusterAuth,
  ClusterCaches,
  ClusterRegistry,
  KubeGateways,
} from './kubernetes';
import {
  EntityWorkloads,
  OrphanAnnotator,
  OrphanFinder,
  WATCH_CACHE_TRIMMERS,
} from './orphans';

/**
 * Adds an AuthenticationStrategy for an `authProvider`, as
 * `kubernetesAuthStrategyExtensionPoint` does for Backstage's Kubernetes
 * backend: register a custom strategy (Pinniped, an x509 client certificate
 * strategy, …) with both, and both reach the same clusters.
 *
 * @public
 */
export const pvcPrunerAuthStrategyExtensionPoint =
  createExtensionPoint<KubernetesAuthStrategyExtensionPoint>({
    id: 'pvc-pruner.auth-strategy',
  });

/**
 * The pvc-pruner backend plugin: finds an entity's orphaned
 * PersistentVolumeClaims and prunes them behind permission checks.
 *
 * @public
 */
export const pvcPrunerPlugin = createBackendPlugin({
  pluginId: PVC_PRUNER_PLUGIN_ID,
  register(env) {
    const extraStrategies = new Map<string, AuthenticationStrategy>();
    env.registerExtensionPoint(pvcPrunerAuthStrategyExtensionPoint, {
      addAuthStrategy(key, strategy) {
        if (key.includes('-'))
          throw new Error('Strategy name can not include dashes');
        extraStrategies.set(key, strategy);
      },
    });
    env.registerInit({
      deps: {
        config: coreServices.rootConfig,
        logger: coreServices.logger,
        database: coreServices.database,
        httpAuth: coreServices.httpAuth,
        httpRouter: coreServices.httpRouter,
        permissions: coreServices.permissions,
        permissionsRegistry: coreServices.permissionsRegistry,
        auditor: coreServices.auditor,
        auth: coreServices.auth,
        lifecycle: coreServices.lifecycle,
        scheduler: coreServices.scheduler,
        catalog: catalogServiceRef,
      },
      async init({
        config,
        logger,
        database,
        httpAuth,
        httpRouter,
        permissions,
        permissionsRegistry,
        auditor,
        auth,
        lifecycle,
        scheduler,
        catalog,
      }) {
        const options = readOptions(config);
        const permissionsEnabled =
          config.getOptionalBoolean('permission.enabled') ?? false;
        if (!permissionsEnabled) {
          logger.warn(
            `pvc-pruner: the permission framework is off (permission.enabled is not true), so ${
              options.requirePermissionFramework
                ? 'pruning is refused (pvcPruner.requirePermissionFramework)'
                : 'every signed-in user may prune'
            }`,
          );
        }
        permissionsRegistry.addPermissions(pvcPrunerPermissions);

        const clusterAuth = ClusterAuth.create({
          config,
          logger,
          extraStrategies,
        });
        const clusters = ClusterRegistry.fromConfig({
          config,
          logger,
          catalog,
          auth,
          clusterAuth,
          catalogClusters: options.catalogClusters,
        });
        const gateways = new KubeGateways(
          clusters,
          clusterAuth,
          options.clusterRequestTimeoutMs,
        );
        const caches = new ClusterCaches({
          trim: WATCH_CACHE_TRIMMERS,
          logger,
          // As long as a cluster may take to answer at all.
          syncWaitMs: options.clusterRequestTimeoutMs,
        });
        lifecycle.addShutdownHook(() => caches.stop());
        const store = await PruneJobStore.create({ database });
        const annotator = new OrphanAnnotator(
          await OrphanSightingStore.create({ database }),
          PriceList.fromConfig(config),
        );
        const orphanFinder = new OrphanFinder(gateways, caches, annotator);
        const events = new JobEvents(store);
        const leaseMs = options.leaseDurationSeconds * 1000;
        const jobs = new PruneJobs(
          {
            store,
            runner: new PruneRunner(
              store,
              events,
              new VolumeFollower(options.volumeWaitTimeoutMs),
              { renewIntervalMs: leaseMs / 3 },
            ),
            gateways,
            lock: new LeaseLock({
              leaseDurationSeconds: options.leaseDurationSeconds,
              holderPrefix: `backstage-${hostname()}-${process.pid}`,
              clock: store,
            }),
            logger,
          },
          { heartbeatMs: leaseMs / 3 },
        );
        await InterruptedJobSweeper.schedule({
          scheduler,
          store,
          logger,
          staleAfterMs: leaseMs,
        });
        lifecycle.addShutdownHook(() => jobs.shutdown());

        httpRouter.use(
          await createRouter({
            httpAuth,
            permissions,
            auditor,
            entityWorkloads: new EntityWorkloads(catalog),
            orphanFinder,
            fleet: new FleetService({
              catalog,
              auth,
              permissions,
              orphanFinder,
              annotator,
            }),
            jobs,
            store,
            events,
            clusters,
            pruneDisabledReason:
              !permissionsEnabled && options.requirePermissionFramework
                ? 'Pruning is disabled: pvcPruner.requirePermissionFramework is set but the permission framework is off (permission.enabled)'
                : undefined,
          }),
        );
        httpRouter.addAuthPolicy({ path: '/health', allow: 'unauthenticated' });
      },
    });
  },
});
