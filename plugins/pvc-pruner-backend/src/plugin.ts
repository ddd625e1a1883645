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
import { notificationService } from '@backstage/plugin-notifications-node';
import {
  PVC_PRUNER_PLUGIN_ID,
  pvcPrunerPermissions,
} from 'backstage-plugin-pvc-pruner-common';
import { readOptions } from './options';
import { permissionFrameworkGate } from './permissions';
import {
  OpenStreamLimits,
  RUNNING_JOBS_PER_STATEFULSET,
  RunningJobLimits,
} from './limits';
import { createRouter } from './router';
import {
  ReclaimPermissions,
  ReleasedVolumes,
  VolumeAttribution,
  VolumeReclaimJobs,
  VolumeReclaimRunner,
  withReclaimFields,
} from './reclaim';
import { PriceList } from './cost';
import {
  AutomaticPruneGuard,
  AutomaticPruneJobs,
  AnnouncementStore,
  AnnouncingPlanner,
  AutoPruneAnswer,
  AutoPruneNotifier,
  AutoPrunePlanner,
  AutoPruneRunStore,
  AutoPruneTask,
  ClaimKeepRequests,
  ClaimKeepStore,
  fleetAutoPrune,
  KeepSteps,
  systemPlugins,
} from './automation';
import {
  OrphanSightingStore,
  PruneJobStore,
  RetentionCleaner,
} from './database';
import { FleetService, UnownedOrphans } from './fleet';
import {
  ClaimLineageStore,
  LineageRecorder,
  ReferencedClaimUids,
  WatchCacheLineage,
} from './lineage';
import {
  FleetLeftBehindReader,
  LeftBehindAccess,
  LeftBehindFinder,
} from './leftBehind';
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
  InUseClaimsSweeper,
  OrphanAnnotator,
  OrphanFinder,
  WATCH_CACHE_TRIMMERS,
} from './orphans';
import {
  NamespaceOwners,
  OwnershipChecks,
  OwnershipGuards,
  WorkloadCatalog,
} from './ownership';
import {
  KeptSnapshots,
  KeptSnapshotTotals,
  OrphanSnapshotPlanner,
  SnapshotExpiryTask,
  SnapshotKeeper,
  SnapshotRestorer,
  SnapshotSeal,
  SnapshotSteps,
} from './snapshots';

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
        instanceMetadata: coreServices.rootInstanceMetadata,
        catalog: catalogServiceRef,
        notifications: notificationService,
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
        instanceMetadata,
        catalog,
        notifications,
      }) {
        const options = readOptions(config);
        const gate = permissionFrameworkGate({
          permissionsEnabled:
            config.getOptionalBoolean('permission.enabled') ?? false,
          pvcPruner: options,
        });
        gate.warnings.forEach(warning => logger.warn(warning));
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
          trim: {
            ...WATCH_CACHE_TRIMMERS,
            volume: withReclaimFields(WATCH_CACHE_TRIMMERS.volume),
          },
          logger,
          // As long as a cluster may take to answer at all.
          syncWaitMs: options.clusterRequestTimeoutMs,
        });
        lifecycle.addShutdownHook(() => caches.stop());
        const store = await PruneJobStore.create({ database });
        const sightings = await OrphanSightingStore.create({ database });
        const lineage = await ClaimLineageStore.create({ database });
        const claimKeeps = await ClaimKeepStore.create({
          database,
          markTrustMs: options.leaseDurationSeconds * 1000,
        });
        const announcements = await AnnouncementStore.create({ database });
        if (!options.autoPrune.enabled) await announcements.clear();
        const seal = await SnapshotSeal.fromDatabase(database);
        const autoPruneRuns = await AutoPruneRunStore.create({
          database,
          schedule: options.autoPrune.schedule,
        });
        await RetentionCleaner.schedule({
          scheduler,
          jobs: store,
          sightings,
          lineage,
          keeps: claimKeeps,
          announcements,
          referenced: new ReferencedClaimUids({ gateways, caches }),
          autoPruneRuns,
          logger,
          retentionDays: options.retentionDays,
        });
        const prices = PriceList.fromConfig(config);
        const annotator = new OrphanAnnotator(sightings, prices);
        const workloads = new WorkloadCatalog({ catalog, auth, logger });
        const recorder = new LineageRecorder({
          store: lineage,
          workloads,
          logger,
        });
        await WatchCacheLineage.schedule(scheduler, { caches, recorder });
        // Automation deletes by first sighting: a claim used between two scans must start a new grace.
        if (options.autoPrune.enabled)
          await InUseClaimsSweeper.schedule(scheduler, { caches, sightings });
        const orphanFinder = new OrphanFinder(
          gateways,
          caches,
          annotator,
          { pausedStatefulSets: options.pausedStatefulSets },
          new OrphanSnapshotPlanner(options.snapshots),
          recorder,
        );
        const namespaceOwners = new NamespaceOwners(
          options.namespaceOwnerAnnotation,
        );
        const ownership = new OwnershipChecks({
          permissions,
          workloads,
          namespaceOwners,
        });
        const leftBehindFinder = new LeftBehindFinder({
          gateways,
          lineage,
          workloads,
          annotator,
          caches,
        });
        const leftBehind = new LeftBehindAccess({
          permissions,
          finder: leftBehindFinder,
          ownership,
          workloads,
        });
        const events = new JobEvents(store);
        const leaseMs = options.leaseDurationSeconds * 1000;
        const follower = new VolumeFollower(options.volumeWaitTimeoutMs);
        const lock = new LeaseLock({
          leaseDurationSeconds: options.leaseDurationSeconds,
          holderPrefix: `backstage-${hostname()}-${process.pid}`,
          clock: store,
        });
        const limits = new RunningJobLimits(store, {
          perUser: options.runningJobsPerUser,
          perStatefulSet: RUNNING_JOBS_PER_STATEFULSET,
        });
        const jobs = new PruneJobs(
          {
            store,
            runner: new PruneRunner(
              store,
              events,
              follower,
              {
                renewIntervalMs: leaseMs / 3,
                pausedStatefulSets: options.pausedStatefulSets,
              },
              [new OwnershipGuards(ownership, workloads)],
              // Keeps first: a kept claim is not snapshotted for nothing.
              [
                new KeepSteps(claimKeeps),
                new SnapshotSteps({ events, options: options.snapshots, seal }),
              ],
            ),
            gateways,
            lock,
            limits,
            logger,
            ownership,
            leftBehind,
          },
          {
            heartbeatMs: leaseMs / 3,
            snapshotsEnabled: options.snapshots.enabled,
          },
        );
        const automaticPrunes = new AutomaticPruneJobs({
          jobs,
          auth,
          auditor,
          logger,
          workloads,
          namespaceOwners,
          keeps: claimKeeps,
          guard: new AutomaticPruneGuard({
            options: options.autoPrune,
            workloads,
          }),
          options: options.autoPrune,
          snapshotsEnabled: options.snapshots.enabled,
        });
        const snapshotHistory = {
          getJob: (id: string) => store.getJob(id),
          append: events.append.bind(events),
        };
        await SnapshotExpiryTask.schedule(scheduler, {
          clusters: gateways,
          clientSide: cluster => clusterAuth.isClientSide(cluster),
          history: snapshotHistory,
          seal,
          auditor,
          logger,
          retentionDays: options.snapshots.retentionDays,
        });
        await InterruptedJobSweeper.schedule({
          scheduler,
          store,
          logger,
          staleAfterMs: leaseMs,
        });
        lifecycle.addShutdownHook(() => jobs.shutdown());
        const autoPruneNotifier = new AutoPruneNotifier({
          notifications,
          systemMetadata: systemPlugins(instanceMetadata, config),
          logger,
        });
        await new AutoPruneTask({
          options: options.autoPrune,
          planning: new AnnouncingPlanner({
            planning: new AutoPrunePlanner({
              catalog: workloads,
              finder: orphanFinder,
              databaseNow: sightings.now,
              firstSightings: uids => sightings.firstSeenInDatabase(uids),
              keeps: claimKeeps,
              options: options.autoPrune,
            }),
            announcements,
            notifyBeforeMs: options.autoPrune.notifyBeforeMs,
          }),
          prunes: automaticPrunes,
          jobs: store,
          runs: autoPruneRuns,
          notifier: autoPruneNotifier,
          logger,
          auditor,
          currency: prices?.currency,
          pruneDisabledReason: gate.pruneDisabledReason,
        }).schedule(scheduler);
        const attribution = new VolumeAttribution(lineage, workloads);
        const reclaimPermissions = new ReclaimPermissions(permissions);

        const autoPrune = {
          answer: new AutoPruneAnswer({
            options: options.autoPrune,
            workloads,
            keeps: claimKeeps,
            announcements,
            snapshotsEnabled: options.snapshots.enabled,
            schedule: autoPruneRuns,
          }),
          keeps: new ClaimKeepRequests({
            orphanFinder,
            ownership,
            keeps: claimKeeps,
          }),
        };

        httpRouter.use(
          await createRouter({
            httpAuth,
            permissions,
            auditor,
            entityWorkloads: new EntityWorkloads(catalog),
            orphanFinder,
            leftBehind: { finder: leftBehindFinder, access: leftBehind },
            fleet: new FleetService({
              catalog,
              permissions,
              orphanFinder,
              annotator,
              workloads,
              ownership,
              leftBehind: new FleetLeftBehindReader({
                gateways,
                lineage,
                finder: leftBehindFinder,
                access: leftBehind,
              }),
              autoPrune: () =>
                fleetAutoPrune(options.autoPrune.enabled, autoPruneRuns),
              // Only where the snapshots RBAC is applied, as it is with snapshots enabled.
              snapshots: options.snapshots.enabled
                ? new KeptSnapshotTotals({ gateways, prices, seal })
                : undefined,
            }),
            unowned: new UnownedOrphans({
              permissions,
              orphanFinder,
              ownership,
              annotator,
              leftBehind: leftBehindFinder,
            }),
            ownership,
            snapshotKeeper: new SnapshotKeeper({
              gateways,
              ownership,
              history: snapshotHistory,
              seal,
              retentionDays: options.snapshots.retentionDays,
              maxKeepDays: options.snapshots.maxKeepDays,
              prices,
            }),
            keptSnapshots: new KeptSnapshots(
              { orphanFinder, gateways, ownership, seal },
              { retentionDays: options.snapshots.retentionDays, prices },
            ),
            restorer: new SnapshotRestorer({
              gateways,
              ownership,
              store,
              events,
              seal,
              logger,
            }),
            jobs,
            store,
            events,
            clusters,
            eventStreams: new OpenStreamLimits(options.eventStreamsPerUser),
            pruneDisabledReason: gate.pruneDisabledReason,
            autoPrune,
            reclaim: {
              volumes: new ReleasedVolumes({
                gateways,
                caches,
                attribution,
                permissions: reclaimPermissions,
                prices,
              }),
              jobs: new VolumeReclaimJobs({
                store,
                runner: new VolumeReclaimRunner(store, events, follower, {
                  renewIntervalMs: leaseMs / 3,
                  followForMs: options.volumeWaitTimeoutMs,
                }),
                gateways,
                lock,
                limits,
                jobs,
                attribution,
                permissions: reclaimPermissions,
                namespaceOwners,
                workloads,
                leaseNamespace: options.reclaimLeaseNamespace,
              }),
            },
          }),
        );
        httpRouter.addAuthPolicy({ path: '/health', allow: 'unauthenticated' });
      },
    });
  },
});
