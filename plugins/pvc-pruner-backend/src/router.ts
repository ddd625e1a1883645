import {
  AuditorService,
  HttpAuthService,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import { InputError, NotAllowedError, NotFoundError } from '@backstage/errors';
import {
  pvcPrunerOrphansReadPermission,
  pvcPrunerPrunePermission,
} from 'backstage-plugin-pvc-pruner-common';
import express from 'express';
import Router from 'express-promise-router';
import { z } from 'zod/v3';
import { streamJobEvents } from './eventStream';
import { PruneJobStore } from './database';
import { FleetService } from './fleet';
import { JobEvents, PruneJobs } from './jobs';
import { EntityWorkloads, OrphanFinder, parseEntityRefStrict } from './orphans';
import { requirePermission } from './permissions';

/** Request bodies above this are refused with 413 before they are parsed. */
export const MAX_BODY = '64kb';
const MAX_PVCS = 1000;

const k8sName = z
  .string()
  .min(1)
  .max(253)
  .regex(
    /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
    'must be a lowercase RFC 1123 name',
  );

const pruneRequestSchema = z
  .object({
    entityRef: z.string().min(1),
    cluster: z.string().min(1).max(253),
    namespace: k8sName.max(63),
    statefulSet: k8sName,
    pvcs: z
      .array(
        z.object({ name: k8sName, uid: z.string().min(1).max(64) }).strict(),
      )
      .min(1, 'pvcs must list at least one claim')
      .max(MAX_PVCS),
    dryRun: z.boolean().optional(),
  })
  .strict();

const entityQuery = z.object({
  entityRef: z.string().min(1, 'entityRef is required'),
});
const historyQuery = entityQuery.extend({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().optional(),
});
const fleetQuery = z
  .object({
    cluster: z.string().min(1).max(253).optional(),
    namespace: k8sName.max(63).optional(),
    owner: z.string().min(1).max(255).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
    cursor: z.string().min(1).max(1000).optional(),
  })
  .strict();
const afterQuery = z.object({
  after: z.coerce.number().int().min(0).default(0),
});
const lastEventIdHeader = z.object({
  'Last-Event-ID': z
    .string()
    .regex(/^\d{1,15}$/, 'must be the seq of an event')
    .transform(Number),
});

function parse<T extends z.ZodTypeAny>(
  schema: T,
  input: unknown,
  what: string,
): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map(i => `${i.path.join('.') || what}: ${i.message}`)
      .join('; ');
    throw new InputError(`Invalid ${what}: ${issues}`);
  }
  return parsed.data;
}

export interface RouterOptions {
  httpAuth: HttpAuthService;
  permissions: PermissionsService;
  auditor: AuditorService;
  entityWorkloads: EntityWorkloads;
  orphanFinder: OrphanFinder;
  jobs: PruneJobs;
  store: PruneJobStore;
  events: JobEvents;
  fleet: FleetService;
  /** When set, prunes are refused with this reason (e.g. permissions are off but required). */
  pruneDisabledReason?: string;
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
  } = options;
  const router = Router();
  router.use(express.json({ limit: MAX_BODY }));

  const readableJob = async (req: express.Request) => {
    const credentials = await httpAuth.credentials(req, {
      allow: ['user', 'service'],
    });
    const job = await store.getJob(
      z.string().uuid().safeParse(req.params.id).success ? req.params.id : '',
    );
    if (!job)
      throw new NotFoundError(`No prune job with id "${req.params.id}"`);
    await requirePermission({
      permissions,
      permission: pvcPrunerOrphansReadPermission,
      entityRef: job.entityRef,
      credentials,
    });
    return job;
  };

  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });

  router.get('/v1/orphans', async (req, res) => {
    const { entityRef } = parse(entityQuery, req.query, 'query');
    const credentials = await httpAuth.credentials(req, {
      allow: ['user', 'service'],
    });
    const audit = await auditor.createEvent({
      eventId: 'orphans-read',
      severityLevel: 'low',
      request: req,
      meta: { entityRef },
    });
    try {
      const target = await entityWorkloads.resolve(entityRef, credentials);
      await requirePermission({
        permissions,
        permission: pvcPrunerOrphansReadPermission,
        entityRef: target.entityRef,
        credentials,
      });
      const result = await orphanFinder.findForEntity(target);
      await audit.success({ meta: { orphans: result.totals.orphans } });
      res.json(result);
    } catch (error) {
      await audit.fail({ error: error as Error });
      throw error;
    }
  });

  router.get('/v1/fleet', async (req, res) => {
    const query = parse(fleetQuery, req.query, 'query');
    const credentials = await httpAuth.credentials(req, {
      allow: ['user', 'service'],
    });
    const audit = await auditor.createEvent({
      eventId: 'fleet-read',
      severityLevel: 'low',
      request: req,
      meta: { query },
    });
    try {
      const fleet = await options.fleet.list(query, credentials);
      await audit.success({
        meta: {
          entities: fleet.totals.entities,
          orphans: fleet.totals.orphans,
        },
      });
      res.json(fleet);
    } catch (error) {
      await audit.fail({ error: error as Error });
      throw error;
    }
  });

  router.post('/v1/prune-jobs', async (req, res) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    const body = parse(pruneRequestSchema, req.body, 'prune request');
    const entityRef = parseEntityRefStrict(body.entityRef);
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
      },
    });
    try {
      if (options.pruneDisabledReason)
        throw new NotAllowedError(options.pruneDisabledReason);
      const target = await entityWorkloads.resolve(entityRef, credentials);
      await requirePermission({
        permissions,
        permission: pvcPrunerPrunePermission,
        entityRef: target.entityRef,
        credentials,
      });
      const job = await jobs.start(
        { ...body, entityRef: target.entityRef },
        target,
        requestedBy,
        {
          finished: (finishedJob, result) =>
            void (result.status === 'succeeded'
              ? audit.success({
                  meta: {
                    jobId: finishedJob.id,
                    outcome: result.status,
                    deleted: result.summary.deleted.map(p => p.name),
                    skipped: result.summary.skipped.map(p => p.name),
                  },
                })
              : audit.fail({
                  error: new Error(
                    `prune ${result.status}${
                      result.reason ? `: ${result.reason}` : ''
                    }`,
                  ),
                  meta: {
                    jobId: finishedJob.id,
                    outcome: result.status,
                    deleted: result.summary.deleted.map(p => p.name),
                    failed: result.summary.failed.map(p => p.name),
                  },
                })),
          crashed: (_job, error) => void audit.fail({ error }),
        },
      );
      res.status(202).json({ id: job.id });
    } catch (error) {
      await audit.fail({ error: error as Error });
      throw error;
    }
  });

  router.get('/v1/prune-jobs', async (req, res) => {
    const query = parse(historyQuery, req.query, 'query');
    const credentials = await httpAuth.credentials(req, {
      allow: ['user', 'service'],
    });
    const target = await entityWorkloads.resolve(query.entityRef, credentials);
    await requirePermission({
      permissions,
      permission: pvcPrunerOrphansReadPermission,
      entityRef: target.entityRef,
      credentials,
    });
    res.json(
      await store.listJobs({
        entityRef: target.entityRef,
        limit: query.limit,
        cursor: query.cursor,
      }),
    );
  });

  router.get('/v1/prune-jobs/:id', async (req, res) => {
    res.json(await readableJob(req));
  });

  router.get('/v1/prune-jobs/:id/events', async (req, res) => {
    const query = parse(afterQuery, req.query, 'query');
    // A reconnecting EventSource repeats the first URL and says where it got to in this header.
    const lastEventId = req.header('last-event-id');
    const after = lastEventId
      ? parse(lastEventIdHeader, { 'Last-Event-ID': lastEventId }, 'header')[
          'Last-Event-ID'
        ]
      : query.after;
    const job = await readableJob(req);
    streamJobEvents({ req, res, jobId: job.id, after, store, events });
  });

  return router;
}
