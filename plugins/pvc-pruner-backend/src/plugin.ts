import { hostname } from 'node:os';
import {
  coreServices,
  createBackendPlugin,
} from '@backstage/backend-plugin-api';
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
  JobEvents,
  LeaseLock,
  PruneJobs,
  PruneRunner,
  VolumeFollower,
} from './jobs';
import { ClusterCaches, ClusterRegistry, KubeGateways } from './kubernetes';
import {
  EntityWorkloads,
  OrphanAnnotator,
  OrphanFinder,
  WATCH_CACHE_TRIMMERS,
} from './orphans';

/**
 * The pvc-pruner backend plugin: finds an entity's orphaned
 * PersistentVolumeClaims and prunes them behind permission checks.
 *
 * @public
 */
export const pvcPrunerPlugin = createBackendPlugin({
  pluginId: PVC_PRUNER_PLUGIN_ID,
  register(env) {
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

        const gateways = new KubeGateways(
          ClusterRegistry.fromConfig(config, logger),
          options.clusterRequestTimeoutMs,
        );
        const caches = new ClusterCaches(gateways, {
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
            lock: new LeaseLock(
              options.leaseDurationSeconds,
              `backstage-${hostname()}-${process.pid}`,
            ),
            logger,
          },
          { heartbeatMs: leaseMs / 3, staleAfterMs: leaseMs },
        );
        await jobs.startHousekeeping();
        lifecycle.addShutdownHook(() => jobs.stop());

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
