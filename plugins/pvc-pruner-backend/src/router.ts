import {
  AuditorService,
  BackstageCredentials,
  BackstageUserPrincipal,
  HttpAuthService,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import { NotAllowedError, NotFoundError } from '@backstage/errors';
import type { JsonObject } from '@backstage/types';
import {
  pvcPrunerFleetUnownedReadPermission,
  pvcPrunerOrphansReadPermission,
  pvcPrunerPrunePermission,
  pvcPrunerUnownedPrunePermission,
} from 'backstage-plugin-pvc-pruner-common';
import { ResourcePermission } from '@backstage/plugin-permission-common';
import express from 'express';
import Router from 'express-promise-router';
import { streamJobEvents } from './eventStream';
import { KeptJson } from './KeptJson';
import { PruneJobStore } from './database';
import { FleetService, UnownedOrphans } from './fleet';
import { auditedOutcome, JobEvents, PruneJobs } from './jobs';
import {
  EntityWorkloads,
  EntityWorkloadTarget,
  OrphanFinder,
  parseEntityRefStrict,
} from './orphans';
import {
  authProviderOf,
  ClusterRegistry,
  requestAuthFromHeaders,
  userTokenKeyOf,
} from './kubernetes';
import {
  admitReadersOf,
  ClaimantJobReaders,
  OwnershipChecks,
} from './ownership';
import type { LeftBehindAccess, LeftBehindFinder } from './leftBehind';
import {
  ReclaimJobReaders,
  ReleasedVolumes,
  VolumeReclaimJobs,
} from './reclaim';
import { KeptSnapshots, SnapshotKeeper, SnapshotRestorer } from './snapshots';
import { requireBasicPermission, requirePermission } from './permissions';
import type { AutoPruneAnswer, ClaimKeepRequests } from './automation';
import { OpenStreamLimits } from './limits';
import { createOpenApiRouter } from './schema/openapi';
import { explainValidationErrors } from './schema/validationErrors';

/** Request bodies above this are refused with 413 before they are parsed. */
export const MAX_BODY = '64kb';

/** Entities per page of `GET /v1/fleet`, as the spec's default says. */
const DEFAULT_FLEET_PAGE = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RouterOptions {
  httpAuth: HttpAuthService;
  permissions: PermissionsService;
  auditor: AuditorService;
  entityWorkloads: EntityWorkloads;
  orphanFinder: OrphanFinder;
  /** The claims deleted StatefulSets left behind (`GET /v1/left-behind`). */
  leftBehind: {
    finder: Pick<LeftBehindFinder, 'findForEntity'>;
    access: Pick<LeftBehindAccess, 'readable'>;
  };
  jobs: PruneJobs;
  store: PruneJobStore;
  events: JobEvents;
  clusters: ClusterRegistry;
  fleet: FleetService;
  unowned: UnownedOrphans;
  ownership: OwnershipChecks;
  /** Sets a snapshot's keep-until (`POST /v1/snapshots/keep`). */
  snapshotKeeper: Pick<SnapshotKeeper, 'keep'>;
  /** The snapshots pvc-pruner kept of an entity's StatefulSets (`GET /v1/snapshots`). */
  keptSnapshots: Pick<KeptSnapshots, 'list'>;
  /** Claims re-created from those snapshots (`POST /v1/restores`). */
  restorer: Pick<SnapshotRestorer, 'restore'>;
  /** How many event streams each caller may have open. */
  eventStreams: OpenStreamLimits;
  /** Released volumes whose claim is gone (`GET /v1/released-volumes`) and their reclaim (`POST /v1/reclaim-jobs`). */
  reclaim?: {
    volumes: Pick<ReleasedVolumes, 'list'>;
    jobs: Pick<VolumeReclaimJobs, 'start'>;
  };
  /** When set, prunes are refused with this reason (the permission framework is off, and nobody opted out). */
  pruneDisabledReason?: string;
  /** Automatic pruning: what the orphan answer says of it, and the card's keeps (`/v1/claim-keeps`). */
  autoPrune?: {
    answer: Pick<AutoPruneAnswer, 'forEntity'>;
    keeps: Pick<ClaimKeepRequests, 'keep' | 'unkeep'>;
  };
}

/** Any route's request: the helpers below serve several routes. */
type IncomingRequest = Parameters<HttpAuthService['credentials']>[0];

/** JSON already written (as res.json would write it), sent as res.json sends it. */
function sendJsonText(res: express.Response, json: string) {
  res.type('application/json').send(json);
}

export async function createRouter(
  options: RouterOptions,
): Promise<express.Router> {
  const {
    httpAuth,
    permissions,
    auditor,
    entityWorkloads,
    orphanFinder,
    jobs,
    store,
    events,
    clusters,
    fleet,
    unowned,
    ownership,
    keptSnapshots,
    restorer,
    snapshotKeeper,
  } = options;
  const keptJson = new KeptJson();
  // Parsed here, ahead of the spec's router, so a body over the limit stays a
  // 413: that router answers every error before its routes as a 400.
  const router = Router();
  router.use(express.json({ limit: MAX_BODY }));
  const api = await createOpenApiRouter({
    validatorOptions: {
      // httpAuth decides who is asking; the spec's security only documents it.
      validateSecurity: false,
      validateRequests: {
        coerceTypes: false,
        // As before the spec validated: a parameter the API does not know is ignored.
        allowUnknownQueryParameters: true,
      },
    },
  });
  router.use(api);
  router.use(explainValidationErrors);

  /** A read by one of `allow` (users or services unless told), audited: the event names the request, and on success what was found. */
  const auditedRead = async <T>(
    req: IncomingRequest,
    event: { eventId: string; meta: JsonObject },
    read: (
      credentials: BackstageCredentials,
    ) => Promise<{ result: T; meta: JsonObject }>,
    allow: Array<'user' | 'service'> = ['user', 'service'],
  ): Promise<T> => {
    const credentials = await httpAuth.credentials(req, { allow });
    const audit = await auditor.createEvent({
      ...event,
      severityLevel: 'low',
      request: req,
    });
    try {
      const { result, meta } = await read(credentials);
      await audit.success({ meta });
      return result;
    } catch (error) {
      await audit.fail({ error: error as Error });
      throw error;
    }
  };

  /** The entity's workloads, once the caller is allowed `permission` on it. */
  const permittedTarget = async (
    entityRef: string,
    permission: ResourcePermission<'catalog-entity'>,
    credentials: BackstageCredentials,
  ) => {
    const target = await entityWorkloads.resolve(entityRef, credentials);
    await requirePermission({
      permissions,
      permission,
      entityRef: target.entityRef,
      credentials,
    });
    return target;
  };

  const reclaimJobReaders = new ReclaimJobReaders(permissions);
  const claimantJobReaders = new ClaimantJobReaders(permissions);
  const readableJob = async (req: IncomingRequest, id: string) => {
    const credentials = await httpAuth.credentials(req, {
      allow: ['user', 'service'],
    });
    const job = UUID.test(id) ? await store.getJob(id) : undefined;
    if (!job) throw new NotFoundError(`No prune job with id "${id}"`);
    if (job.kind === 'reclaim') {
      const [readable] = await reclaimJobReaders.readable(credentials, [job]);
      if (!readable)
        throw new NotAllowedError(
          'Reading a reclaim needs pvc-pruner.orphans.read on every entity its volumes were traced to (pvc-pruner.fleet.unowned.read when none was, or one is gone or was re-created)',
        );
    } else if (job.entityRef) {
      await requirePermission({
        permissions,
        permission: pvcPrunerOrphansReadPermission,
        entityRef: job.entityRef,
        credentials,
      });
      const [readable] = await claimantJobReaders.readable(credentials, [job]);
      if (!readable)
        throw new NotAllowedError(
          'Reading a prune needs pvc-pruner.orphans.read on every entity that claimed its StatefulSet when it ran, not only on the entity it went through',
        );
    } else
      await requireBasicPermission({
        permissions,
        permission: pvcPrunerFleetUnownedReadPermission,
        credentials,
        why: 'Reading the prune of a StatefulSet that no catalog entity claims',
      });
    return job;
  };

  api.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });

  // The clusters and their auth providers, as the Kubernetes backend's /clusters lists them: the card asks the user for the tokens of client-side providers.
  api.get('/v1/clusters', async (req, res) => {
    await httpAuth.credentials(req, { allow: ['user', 'service'] });
    res.json({
      items: (await clusters.list()).map(c => ({
        name: c.name,
        ...(c.title ? { title: c.title } : {}),
        authProvider: authProviderOf(c),
        ...(userTokenKeyOf(c) ? { userTokenKey: userTokenKeyOf(c) } : {}),
      })),
    });
  });

  api.get('/v1/orphans', async (req, res) => {
    const { entityRef } = req.query;
    const result = await auditedRead(
      req,
      { eventId: 'orphans-read', meta: { entityRef } },
      async credentials => {
        const target = await permittedTarget(
          entityRef,
          pvcPrunerOrphansReadPermission,
          credentials,
        );
        const admit = admitReadersOf(ownership, credentials, target);
        const autoPrune = options.autoPrune?.answer.forEntity(target);
        const found = await orphanFinder.findForEntity(
          target,
          requestAuthFromHeaders(req.headers),
          autoPrune ? autoPrune.admitting(admit) : admit,
        );
        const answer = autoPrune ? await autoPrune.answer(found) : found;
        return { result: answer, meta: { orphans: found.totals.orphans } };
      },
    );
    // The StatefulSets' reports come from the watch cache unchanged until the cluster changes: their JSON is kept.
    const reports = result.clusters.flatMap(c => (c.ok ? c.statefulSets : []));
    sendJsonText(res, keptJson.stringify(result, new Set(reports)));
  });

  api.get('/v1/left-behind', async (req, res) => {
    const { entityRef } = req.query;
    res.json(
      await auditedRead(
        req,
        { eventId: 'left-behind-read', meta: { entityRef } },
        async credentials => {
          const target = await permittedTarget(
            entityRef,
            pvcPrunerOrphansReadPermission,
            credentials,
          );
          // A group is shown only to who may read every one of its claimants.
          const found = await options.leftBehind.finder.findForEntity(
            target,
            requestAuthFromHeaders(req.headers),
            groups =>
              options.leftBehind.access.readable(
                credentials,
                groups,
                new Set([target.entityRef]),
              ),
          );
          const claims = found.clusters.reduce(
            (n, c) =>
              n +
              (c.ok
                ? c.groups.reduce((m, g) => m + g.report.orphans.length, 0)
                : 0),
            0,
          );
          return { result: found, meta: { claims } };
        },
      ),
    );
  });

  api.get('/v1/fleet', async (req, res) => {
    const query = req.query;
    const result = await auditedRead(
      req,
      { eventId: 'fleet-read', meta: { query } },
      async credentials => {
        const page = await fleet.list(
          { ...query, limit: query.limit ?? DEFAULT_FLEET_PAGE },
          credentials,
          requestAuthFromHeaders(req.headers),
        );
        const { entities, orphans } = page.totals;
        return { result: page, meta: { entities, orphans } };
      },
      // The fleet is what a person may see across the catalog; no service acts for one here.
      ['user'],
    );
    res.json(result);
  });

  api.get('/v1/unowned/orphans', async (req, res) => {
    const { cluster, namespace, statefulSet, leftBy } = req.query;
    res.json(
      await auditedRead(
        req,
        {
          eventId: 'unowned-orphans-read',
          meta: {
            cluster,
            namespace,
            statefulSet,
            ...(leftBy ? { leftBy } : {}),
          },
        },
        async credentials => {
          const found = await unowned.read(
            credentials,
            { cluster, namespace, statefulSet, leftBy },
            requestAuthFromHeaders(req.headers),
          );
          return {
            result: found,
            meta: { orphans: found.statefulSet.orphans.length },
          };
        },
      ),
    );
  });

  api.post('/v1/prune-jobs', async (req, res) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    const body = req.body;
    const entityRef =
      body.entityRef === undefined
        ? undefined
        : parseEntityRefStrict(body.entityRef);
    const requestedBy = credentials.principal.userEntityRef;
    const audit = await auditor.createEvent({
      eventId: 'prune',
      severityLevel: 'high',
      request: req,
      meta: {
        actor: requestedBy,
        entityRef,
        cluster: body.cluster,
        namespace: body.namespace,
        statefulSet: body.statefulSet,
        pvcs: body.pvcs.map(p => p.name),
        dryRun: Boolean(body.dryRun),
        snapshot: Boolean(body.snapshot),
        ...(body.leftBy
          ? {
              leftBy: {
                evidence: body.leftBy.evidence,
                ...(body.leftBy.statefulSetUid
                  ? { statefulSetUid: body.leftBy.statefulSetUid }
                  : {}),
              },
            }
          : {}),
      },
    });
    try {
      if (options.pruneDisabledReason)
        throw new NotAllowedError(options.pruneDisabledReason);
      // Refused before any cluster is asked; the job's start then checks every claimant in one batch.
      let target;
      if (entityRef)
        target = await permittedTarget(
          entityRef,
          pvcPrunerPrunePermission,
          credentials,
        );
      else
        await requireBasicPermission({
          permissions,
          permission: pvcPrunerUnownedPrunePermission,
          credentials,
          why: 'Pruning a StatefulSet that no catalog entity claims',
        });
      const job = await jobs.start({
        request: {
          ...body,
          ...(target ? { entityRef: target.entityRef } : {}),
        },
        target,
        credentials,
        reporter: auditedOutcome(audit),
        requestAuth: requestAuthFromHeaders(req.headers),
      });
      res.status(202).json({ id: job.id });
    } catch (error) {
      await audit.fail({ error: error as Error });
      throw error;
    }
  });

  /**
   * A user's write on one of an entity's StatefulSets (keep a snapshot,
   * restore one): audited from before any work, refused unless the caller may
   * prune the entity and prunes are enabled; `act` checks the rest.
   */
  const auditedStatefulSetWrite = async <T>(
    req: IncomingRequest,
    event: { eventId: string; severityLevel: 'medium' | 'high' },
    address: { entityRef: string; meta: JsonObject },
    act: (
      target: EntityWorkloadTarget,
      credentials: BackstageCredentials<BackstageUserPrincipal>,
    ) => Promise<{ result: T; meta: JsonObject }>,
  ): Promise<T> => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    const audit = await auditor.createEvent({
      ...event,
      request: req,
      meta: {
        actor: credentials.principal.userEntityRef,
        entityRef: address.entityRef,
        ...address.meta,
      },
    });
    try {
      const target = await permittedTarget(
        parseEntityRefStrict(address.entityRef),
        pvcPrunerPrunePermission,
        credentials,
      );
      if (options.pruneDisabledReason)
        throw new NotAllowedError(options.pruneDisabledReason);
      const { result, meta } = await act(target, credentials);
      await audit.success({ meta });
      return result;
    } catch (error) {
      await audit.fail({ error: error as Error });
      throw error;
    }
  };

  api.get('/v1/snapshots', async (req, res) => {
    const { entityRef } = req.query;
    res.json(
      await auditedRead(
        req,
        { eventId: 'snapshots-read', meta: { entityRef } },
        async credentials => {
          const target = await permittedTarget(
            entityRef,
            pvcPrunerOrphansReadPermission,
            credentials,
          );
          const found = await keptSnapshots.list(
            target,
            credentials,
            requestAuthFromHeaders(req.headers),
          );
          return { result: found, meta: { snapshots: found.totals.snapshots } };
        },
      ),
    );
  });

  api.post('/v1/snapshots/keep', async (req, res) => {
    const body = req.body;
    const { snapshot } = body;
    const kept = await auditedStatefulSetWrite(
      req,
      { eventId: 'snapshot-keep', severityLevel: 'medium' },
      {
        entityRef: snapshot.entityRef,
        meta: {
          cluster: snapshot.cluster,
          namespace: snapshot.namespace,
          statefulSet: snapshot.statefulSet,
          snapshot: snapshot.snapshot.name,
          uid: snapshot.snapshot.uid,
          keepUntil: body.keepUntil,
        },
      },
      async (target, credentials) => {
        const result = await snapshotKeeper.keep({
          request: body,
          target,
          credentials,
          requestAuth: requestAuthFromHeaders(req.headers),
        });
        return {
          result,
          meta: { keepUntil: result.keepUntil, expiresAt: result.expiresAt },
        };
      },
    );
    res.json(kept);
  });

  api.post('/v1/restores', async (req, res) => {
    const body = req.body;
    const restored = await auditedStatefulSetWrite(
      req,
      { eventId: 'restore', severityLevel: 'high' },
      {
        entityRef: body.entityRef,
        meta: {
          cluster: body.cluster,
          namespace: body.namespace,
          statefulSet: body.statefulSet,
          snapshot: body.snapshot.name,
          snapshotUid: body.snapshot.uid,
        },
      },
      async (target, credentials) => {
        const { response, jobId } = await restorer.restore({
          request: { ...body, entityRef: target.entityRef },
          target,
          credentials,
          requestAuth: requestAuthFromHeaders(req.headers),
        });
        return {
          result: response,
          meta: {
            claim: response.claim.name,
            claimUid: response.claim.uid,
            requested: response.requested,
            ...(jobId ? { jobId } : {}),
          },
        };
      },
    );
    res.status(201).json(restored);
  });

  const keeping = () => {
    if (!options.autoPrune)
      throw new NotFoundError('Keeping claims is not set up here');
    return options.autoPrune.keeps;
  };

  api.post('/v1/claim-keeps', async (req, res) => {
    const body = req.body;
    const kept = await auditedStatefulSetWrite(
      req,
      { eventId: 'claim-keep', severityLevel: 'medium' },
      {
        entityRef: body.entityRef,
        meta: {
          cluster: body.cluster,
          namespace: body.namespace,
          statefulSet: body.statefulSet,
          claim: body.claim.name,
          claimUid: body.claim.uid,
          ...(body.until ? { until: body.until } : {}),
        },
      },
      async (target, credentials) => {
        const keep = await keeping().keep(
          {
            target,
            credentials,
            requestAuth: requestAuthFromHeaders(req.headers),
            keptBy: credentials.principal.userEntityRef,
          },
          body,
        );
        return { result: keep, meta: { reason: keep.reason ?? null } };
      },
    );
    res.status(201).json(kept);
  });

  api.delete('/v1/claim-keeps/:uid', async (req, res) => {
    const { entityRef, cluster } = req.query;
    const { uid } = req.params;
    await auditedStatefulSetWrite(
      req,
      { eventId: 'claim-unkeep', severityLevel: 'medium' },
      { entityRef, meta: { cluster, claimUid: uid } },
      async (target, credentials) => {
        await keeping().unkeep(
          {
            target,
            credentials,
            requestAuth: requestAuthFromHeaders(req.headers),
          },
          { cluster, uid },
        );
        return { result: undefined, meta: {} };
      },
    );
    res.status(204).end();
  });

  const reclaiming = () => {
    if (!options.reclaim)
      throw new NotFoundError('Reclaiming volumes is not set up here');
    return options.reclaim;
  };

  api.get('/v1/released-volumes', async (req, res) => {
    const { entityRef } = req.query;
    res.json(
      await auditedRead(
        req,
        { eventId: 'released-volumes-read', meta: { entityRef } },
        async credentials => {
          const target = entityRef
            ? await permittedTarget(
                entityRef,
                pvcPrunerOrphansReadPermission,
                credentials,
              )
            : undefined;
          const found = await reclaiming().volumes.list(
            credentials,
            { entityRef: target?.entityRef },
            requestAuthFromHeaders(req.headers),
          );
          return { result: found, meta: { volumes: found.items.length } };
        },
        // Like the fleet: what a person may see; no service acts for one here.
        ['user'],
      ),
    );
  });

  api.post('/v1/reclaim-jobs', async (req, res) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    const body = req.body;
    const entityRef =
      body.entityRef === undefined
        ? undefined
        : parseEntityRefStrict(body.entityRef);
    const volumeNames = body.volumes.map(v => v.name);
    const audit = await auditor.createEvent({
      eventId: 'volume-reclaim',
      severityLevel: 'high',
      request: req,
      meta: {
        actor: credentials.principal.userEntityRef,
        entityRef,
        cluster: body.cluster,
        namespace: body.namespace,
        volumes: volumeNames,
        dryRun: Boolean(body.dryRun),
      },
    });
    try {
      if (options.pruneDisabledReason)
        throw new NotAllowedError(options.pruneDisabledReason);
      const job = await reclaiming().jobs.start({
        request: { ...body, ...(entityRef ? { entityRef } : {}) },
        credentials,
        reporter: {
          finished: (finishedJob, result) => {
            const meta = {
              jobId: finishedJob.id,
              outcome: result.status,
              reclaimed: result.summary.deleted.map(v => v.name),
              // Patched to Delete, so its provisioner may still delete it: a destructive write the audit must name.
              setToDeleteNotYetSeenDeleted: result.summary.terminating.map(
                v => v.name,
              ),
              skipped: result.summary.skipped.map(v => v.name),
              failed: result.summary.failed.map(v => v.name),
            };
            // Incomplete is not success: a volume set to Delete was not seen deleted.
            void (result.status === 'succeeded'
              ? audit.success({ meta })
              : audit.fail({
                  error: new Error(
                    `reclaim ${result.status}${
                      result.reason ? `: ${result.reason}` : ''
                    }`,
                  ),
                  meta,
                }));
          },
          crashed: (_job, error) => void audit.fail({ error }),
        },
        requestAuth: requestAuthFromHeaders(req.headers),
      });
      res.status(202).json({ id: job.id });
    } catch (error) {
      await audit.fail({ error: error as Error });
      throw error;
    }
  });

  api.get('/v1/prune-jobs', async (req, res) => {
    const query = req.query;
    const credentials = await httpAuth.credentials(req, {
      allow: ['user', 'service'],
    });
    const target = await permittedTarget(
      query.entityRef,
      pvcPrunerOrphansReadPermission,
      credentials,
    );
    const page = await store.listJobs({
      entityRef: target.entityRef,
      limit: query.limit,
      cursor: query.cursor,
    });
    // A job is listed only to who may read it: read on the entity it went through is not enough.
    const [reclaims, prunes] = await Promise.all([
      reclaimJobReaders.readable(credentials, page.items),
      claimantJobReaders.readable(credentials, page.items),
    ]);
    res.json({
      ...page,
      items: page.items.filter((_, i) => reclaims[i] && prunes[i]),
    });
  });

  api.get('/v1/prune-jobs/:id', async (req, res) => {
    res.json(await readableJob(req, req.params.id));
  });

  api.get('/v1/prune-jobs/:id/events', async (req, res) => {
    // A reconnecting EventSource repeats the first URL and says where it got to in this header.
    const lastEventId = req.header('last-event-id');
    const after = Number(lastEventId || req.query.after || 0);
    const job = await readableJob(req, req.params.id);
    // Before headers: one stream too many is a JSON 429.
    const release = options.eventStreams.acquire(
      await httpAuth.credentials(req, { allow: ['user', 'service'] }),
    );
    streamJobEvents({
      req,
      res,
      jobId: job.id,
      after,
      store,
      events,
      onClose: release,
    });
  });

  return router;
}
