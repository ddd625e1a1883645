import { randomUUID } from 'node:crypto';
import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import {
  emptyPruneSummary,
  PruneEvent,
  PruneJob,
  PruneJobPage,
  PruneJobStatus,
  PvcOutcome,
} from 'backstage-plugin-pvc-pruner-common';
import { Knex } from 'knex';
import {
  decodePageCursor,
  encodePageCursor,
  invalidCursor,
} from '../pageCursor';
import { openStoreDatabase, StoreOptions } from './migrate';
import { Timestamp, timestampToIso } from './timestamps';

const JOBS = 'pvc_pruner_jobs';
const EVENTS = 'pvc_pruner_job_events';
const CLAIMANTS = 'pvc_pruner_job_claimants';

/** Statuses of a job that has not finished. */
const ACTIVE_STATUSES: PruneJobStatus[] = ['queued', 'running'];

const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;
/** Stay well below SQLite's limit on bound parameters. */
const ID_CHUNK = 500;

/** What `createJob` needs. */
export interface NewPruneJob {
  /** Defaults to a new uuid. */
  id?: string;
  /** None for a StatefulSet no entity claims (stored as '', the column being required). */
  entityRef?: string;
  cluster: string;
  namespace: string;
  statefulSet: string;
  dryRun: boolean;
  requestedBy: string;
  pvcs: Array<{ name: string; uid: string }>;
  /** `reclaim`: `pvcs` are Released volumes (see `PruneJob.kind`); a prune unless told. */
  kind?: 'prune' | 'reclaim';
  /** A reclaim: the entities its volumes were traced to (see `PruneJob.tracedTo`). */
  tracedTo?: { claimants: string[]; unverified: string[] };
  /** An automatic prune: see {@link AutomaticJob}. */
  automatic?: AutomaticJob;
  /** A prune: the entities in the catalog that claimed its StatefulSet when it was authorized (`PruneJob.claimants`). */
  claimants?: string[];
}

/** What makes a job automatic: the plugin started it, per an entity's auto-prune annotation. */
export interface AutomaticJob {
  /** The entity whose annotation it acts on (`PruneJob.onBehalfOf`). */
  onBehalfOf: string;
  /** The run that started it (`PruneJob.automaticRunId`). */
  runId: string;
  /** The grace it was eligible after, as written in the log ("7d"). */
  grace: string;
}

/** The fields of a job that change while it runs. */
export type PruneJobPatch = Partial<
  Pick<PruneJob, 'status' | 'startedAt' | 'finishedAt' | 'reason' | 'summary'>
>;

interface JobRow {
  id: string;
  entity_ref: string;
  cluster: string;
  namespace: string;
  stateful_set: string;
  dry_run: boolean | number;
  status: PruneJobStatus;
  requested_by: string;
  pvcs: string;
  created_at: Timestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  reason: string | null;
  summary: string;
  last_seq: number | string;
  owner_instance: string | null;
  heartbeat_at: Timestamp | null;
  kind: 'prune' | 'reclaim';
  traced_claimants: string | null;
  on_behalf_of: string | null;
  automatic_run_id: string | null;
}

interface EventRow {
  job_id: string;
  seq: number | string;
  type: PruneEvent['type'];
  at: Timestamp;
  pvc: string | null;
  message: string;
  status: PruneJobStatus | null;
  outcome: string | null;
}

/** Parses an ISO timestamp from a caller into the Date the database is given. */
function isoToDate(iso: string, field: string): Date {
  const date = new Date(iso);
  if (typeof iso !== 'string' || Number.isNaN(date.getTime())) {
    throw new InputError(`${field} is not a valid timestamp: ${String(iso)}`);
  }
  return date;
}

function optionalIso(value: Timestamp | null): string | undefined {
  return value === null || value === undefined
    ? undefined
    : timestampToIso(value);
}

/** A reclaim's traced claimants; one stored without them (or unreadable) was traced to nobody known. */
function tracedOf(json: string | null): NonNullable<PruneJob['tracedTo']> {
  try {
    const parsed = JSON.parse(json ?? 'null');
    const strings = (v: unknown) =>
      Array.isArray(v) && v.every(r => typeof r === 'string');
    if (strings(parsed?.claimants) && strings(parsed?.unverified))
      return { claimants: parsed.claimants, unverified: parsed.unverified };
  } catch {
    // fall through
  }
  return { claimants: [], unverified: [] };
}

/**
 * The claimants a job is stored with: those recorded; none for a person's
 * prune stored before they were recorded; and for an automatic one, an
 * empty list (unknown, which only the platform team reads).
 */
function claimantsField(
  recorded: string[] | undefined,
  automatic: boolean,
): { claimants?: string[] } {
  if (recorded?.length) return { claimants: [...recorded].sort() };
  return automatic ? { claimants: [] } : {};
}

/** A stored job, with its claimants (`recorded`, by job id). */
function rowToJob(row: JobRow, recorded?: Map<string, string[]>): PruneJob {
  const job: PruneJob = {
    id: row.id,
    ...(row.kind === 'reclaim' ? { kind: 'reclaim' } : {}),
    ...(row.entity_ref ? { entityRef: row.entity_ref } : {}),
    cluster: row.cluster,
    namespace: row.namespace,
    statefulSet: row.stateful_set,
    dryRun: Boolean(row.dry_run),
    status: row.status,
    requestedBy: row.requested_by,
    pvcs: JSON.parse(row.pvcs),
    ...(row.kind === 'reclaim'
      ? { tracedTo: tracedOf(row.traced_claimants) }
      : {}),
    ...(row.on_behalf_of ? { onBehalfOf: row.on_behalf_of } : {}),
    ...(row.automatic_run_id ? { automaticRunId: row.automatic_run_id } : {}),
    ...claimantsField(recorded?.get(row.id), Boolean(row.automatic_run_id)),
    createdAt: timestampToIso(row.created_at),
    summary: { ...emptyPruneSummary(), ...JSON.parse(row.summary) },
  };
  const startedAt = optionalIso(row.started_at);
  const finishedAt = optionalIso(row.finished_at);
  if (startedAt !== undefined) job.startedAt = startedAt;
  if (finishedAt !== undefined) job.finishedAt = finishedAt;
  if (row.reason !== null && row.reason !== undefined) job.reason = row.reason;
  return job;
}

function rowToEvent(row: EventRow): PruneEvent {
  const event: PruneEvent = {
    jobId: row.job_id,
    seq: Number(row.seq),
    type: row.type,
    at: timestampToIso(row.at),
    message: row.message,
  };
  if (row.pvc !== null && row.pvc !== undefined) event.pvc = row.pvc;
  if (row.status !== null && row.status !== undefined) {
    event.status = row.status;
  }
  if (row.outcome !== null && row.outcome !== undefined) {
    event.outcome = JSON.parse(row.outcome) as PvcOutcome;
  }
  return event;
}

function encodeCursor(job: PruneJob): string {
  return encodePageCursor({ t: job.createdAt, i: job.id });
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const { t, i } = decodePageCursor(cursor, ['t', 'i']);
  const createdAt = new Date(t);
  if (Number.isNaN(createdAt.getTime())) throw invalidCursor();
  return { createdAt, id: i };
}

function queuedMessage(input: NewPruneJob): string {
  const n = input.pvcs.length;
  if (input.kind === 'reclaim')
    return `Queued ${
      input.dryRun ? 'a dry run of reclaiming' : 'reclaiming'
    } ${n} Released ${n === 1 ? 'volume' : 'volumes'} of claims in ${
      input.namespace
    } by ${input.requestedBy}`;
  const claims = `${n} ${n === 1 ? 'claim' : 'claims'}`;
  const { automatic } = input;
  if (automatic)
    return `Automatic ${
      input.dryRun ? 'dry run' : 'prune'
    } of ${claims} of StatefulSet ${input.namespace}/${
      input.statefulSet
    }, per ${automatic.onBehalfOf}'s auto-prune annotation (${
      automatic.grace
    }); queued by ${input.requestedBy} in run ${automatic.runId}`;
  return `Queued ${
    input.dryRun ? 'a dry run' : 'a prune'
  } of ${claims} of StatefulSet ${input.namespace}/${input.statefulSet} by ${
    input.requestedBy
  }`;
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) {
    out.push(items.slice(i, i + size));
  }
  return out;
}

/**
 * Stores prune jobs and their event logs in the plugin's database, so that
 * every replica can list jobs and replay their events, and a job whose
 * process died can be found (its heartbeat stops) and marked interrupted.
 *
 * Works on better-sqlite3 and PostgreSQL. Timestamps are always written as
 * JavaScript Dates (epoch milliseconds on SQLite, timestamptz on PostgreSQL)
 * and read back as ISO strings.
 */
export class PruneJobStore {
  /**
   * Connects to the plugin database and brings its schema up to date, unless
   * the database service says migrations are skipped.
   */
  static async create(options: StoreOptions): Promise<PruneJobStore> {
    const { db, now } = await openStoreDatabase(options);
    return new PruneJobStore(db, now);
  }

  private constructor(
    private readonly db: Knex,
    private readonly now: () => Promise<Date>,
  ) {}

  /**
   * The time by the database's clock, which every replica shares: heartbeats,
   * the stale-job sweep and Lease expiry are all judged by it.
   */
  currentTime(): Promise<Date> {
    return this.now();
  }

  /**
   * Stores a new queued job and, in the same transaction, its first event
   * (seq 1, `job-queued`).
   */
  async createJob(input: NewPruneJob): Promise<PruneJob> {
    const createdAt = await this.now();
    const job: PruneJob = {
      id: input.id ?? randomUUID(),
      ...(input.kind === 'reclaim'
        ? {
            kind: 'reclaim' as const,
            tracedTo: input.tracedTo ?? { claimants: [], unverified: [] },
          }
        : {}),
      ...(input.entityRef ? { entityRef: input.entityRef } : {}),
      cluster: input.cluster,
      namespace: input.namespace,
      statefulSet: input.statefulSet,
      dryRun: Boolean(input.dryRun),
      status: 'queued',
      requestedBy: input.requestedBy,
      pvcs: input.pvcs.map(p => ({ name: p.name, uid: p.uid })),
      ...(input.automatic
        ? {
            onBehalfOf: input.automatic.onBehalfOf,
            automaticRunId: input.automatic.runId,
          }
        : {}),
      ...claimantsField(input.claimants, Boolean(input.automatic)),
      createdAt: createdAt.toISOString(),
      summary: emptyPruneSummary(),
    };
    await this.db.transaction(async tx => {
      await tx(JOBS).insert({
        id: job.id,
        entity_ref: job.entityRef ?? '',
        cluster: job.cluster,
        namespace: job.namespace,
        stateful_set: job.statefulSet,
        dry_run: job.dryRun,
        status: job.status,
        requested_by: job.requestedBy,
        pvcs: JSON.stringify(job.pvcs),
        created_at: createdAt,
        summary: JSON.stringify(job.summary),
        last_seq: 0,
        kind: input.kind ?? 'prune',
        traced_claimants: job.tracedTo ? JSON.stringify(job.tracedTo) : null,
        on_behalf_of: job.onBehalfOf ?? null,
        automatic_run_id: job.automaticRunId ?? null,
      });
      if (job.claimants?.length)
        await tx(CLAIMANTS).insert(
          job.claimants.map(ref => ({ job_id: job.id, entity_ref: ref })),
        );
      await this.appendEventIn(tx, {
        jobId: job.id,
        type: 'job-queued',
        at: job.createdAt,
        message: queuedMessage(input),
      });
    });
    return job;
  }

  async getJob(id: string): Promise<PruneJob | undefined> {
    const row = await this.db<JobRow>(JOBS).where({ id }).first();
    return row ? (await this.jobsOf(this.db, [row]))[0] : undefined;
  }

  /** The jobs of `rows`, with their claimants (a query per chunk). */
  private async jobsOf(
    db: Knex | Knex.Transaction,
    rows: JobRow[],
  ): Promise<PruneJob[]> {
    const ids = rows.map(r => r.id);
    const claimants = new Map<string, string[]>();
    for (let i = 0; i < ids.length; i += ID_CHUNK) {
      const found: Array<{ job_id: string; entity_ref: string }> = await db(
        CLAIMANTS,
      )
        .select('job_id', 'entity_ref')
        .whereIn('job_id', ids.slice(i, i + ID_CHUNK));
      for (const { job_id, entity_ref } of found)
        claimants.set(job_id, [...(claimants.get(job_id) ?? []), entity_ref]);
    }
    return rows.map(row => rowToJob(row, claimants));
  }

  /**
   * Writes the given fields (those not undefined) and returns the job.
   * Throws NotFoundError for an unknown job, and ConflictError for a status
   * change of a job that has already ended: one another replica marked
   * interrupted stays interrupted.
   */
  async updateJob(id: string, patch: PruneJobPatch): Promise<PruneJob> {
    await this.updateJobIn(this.db, id, patch);
    const job = await this.getJob(id);
    if (!job) throw new NotFoundError(`No prune job ${id}`);
    return job;
  }

  /**
   * Ends a job: its final fields and the last event of its log in one
   * transaction, so that a process killed between the two cannot leave an
   * ended job whose log never says so. Throws as `updateJob` does.
   */
  async finishJob(
    id: string,
    patch: PruneJobPatch,
    lastEvent: Omit<PruneEvent, 'seq' | 'jobId'>,
  ): Promise<PruneEvent> {
    return this.db.transaction(async tx => {
      await this.updateJobIn(tx, id, patch);
      return this.appendEventIn(tx, { ...lastEvent, jobId: id });
    });
  }

  private async updateJobIn(db: Knex, id: string, patch: PruneJobPatch) {
    const update: Record<string, unknown> = {};
    if (patch.status !== undefined) update.status = patch.status;
    if (patch.startedAt !== undefined) {
      update.started_at = isoToDate(patch.startedAt, 'startedAt');
    }
    if (patch.finishedAt !== undefined) {
      update.finished_at = isoToDate(patch.finishedAt, 'finishedAt');
    }
    if (patch.reason !== undefined) update.reason = patch.reason;
    if (patch.summary !== undefined) {
      update.summary = JSON.stringify(patch.summary);
    }
    if (Object.keys(update).length === 0) return;
    const row = db(JOBS).where({ id });
    if (update.status !== undefined) row.whereIn('status', ACTIVE_STATUSES);
    if ((await row.update(update)) === 0) {
      const ended = await db<JobRow>(JOBS).where({ id }).first('status');
      if (!ended) throw new NotFoundError(`No prune job ${id}`);
      throw new ConflictError(
        `Prune job ${id} has already ended: ${ended.status}`,
      );
    }
  }

  /**
   * Appends an event to a job's log with the next seq. Concurrent appends to
   * one job, from this process or another replica, get distinct, gap-free
   * seqs: the job row's counter is bumped and the event inserted in one
   * transaction, and the bump locks the row until it commits.
   */
  async appendEvent(event: Omit<PruneEvent, 'seq'>): Promise<PruneEvent> {
    return this.db.transaction(tx => this.appendEventIn(tx, event));
  }

  private async appendEventIn(
    tx: Knex.Transaction,
    event: Omit<PruneEvent, 'seq'>,
  ): Promise<PruneEvent> {
    const at = isoToDate(event.at, 'at');
    const bumped = await tx(JOBS)
      .where({ id: event.jobId })
      .increment('last_seq', 1);
    if (!bumped) throw new NotFoundError(`No prune job ${event.jobId}`);
    const row = await tx<JobRow>(JOBS)
      .where({ id: event.jobId })
      .first('last_seq');
    const seq = Number(row!.last_seq);
    await tx(EVENTS).insert({
      job_id: event.jobId,
      seq,
      type: event.type,
      at,
      pvc: event.pvc ?? null,
      message: event.message,
      status: event.status ?? null,
      outcome:
        event.outcome === undefined ? null : JSON.stringify(event.outcome),
    });
    const stored: PruneEvent = {
      jobId: event.jobId,
      seq,
      type: event.type,
      at: at.toISOString(),
      message: event.message,
    };
    if (event.pvc !== undefined) stored.pvc = event.pvc;
    if (event.status !== undefined) stored.status = event.status;
    if (event.outcome !== undefined) stored.outcome = event.outcome;
    return stored;
  }

  /** A job's events with seq greater than `afterSeq`, in seq order. */
  async listEvents(
    jobId: string,
    afterSeq = 0,
    limit?: number,
  ): Promise<PruneEvent[]> {
    const query = this.db<EventRow>(EVENTS)
      .where('job_id', jobId)
      .where('seq', '>', afterSeq)
      .orderBy('seq', 'asc');
    if (limit !== undefined) query.limit(limit);
    const rows = await query;
    return rows.map(rowToEvent);
  }

  /**
   * Jobs newest first (createdAt, then id, descending), a page at a time.
   * `nextCursor` is opaque; an unreadable cursor is an InputError. An
   * entity's jobs are those that went through it and the prunes of
   * StatefulSets it claimed.
   */
  async listJobs(
    options: { entityRef?: string; limit?: number; cursor?: string } = {},
  ): Promise<PruneJobPage> {
    const limit = options.limit ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new InputError(`limit must be a positive integer, got ${limit}`);
    }
    const pageSize = Math.min(limit, MAX_PAGE_SIZE);
    const query = this.db<JobRow>(JOBS)
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(pageSize + 1);
    const { entityRef } = options;
    if (entityRef !== undefined) {
      // A union, not an OR, so that each side reads its own index.
      query.whereIn(
        'id',
        this.db(JOBS)
          .select('id')
          .where('entity_ref', entityRef)
          .unionAll(
            this.db(CLAIMANTS).select('job_id').where('entity_ref', entityRef),
          ),
      );
    }
    if (options.cursor !== undefined) {
      const { createdAt, id } = decodeCursor(options.cursor);
      query.where(q =>
        q
          .where('created_at', '<', createdAt)
          .orWhere(q2 =>
            q2.where('created_at', '=', createdAt).where('id', '<', id),
          ),
      );
    }
    const rows = await query;
    const items = await this.jobsOf(this.db, rows.slice(0, pageSize));
    return rows.length > pageSize
      ? { items, nextCursor: encodeCursor(items[items.length - 1]) }
      : { items };
  }

  /** Queued and running jobs, oldest first, optionally of one entity. */
  async activeJobs(entityRef?: string): Promise<PruneJob[]> {
    const query = this.db<JobRow>(JOBS)
      .whereIn('status', ACTIVE_STATUSES)
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ]);
    if (entityRef !== undefined) query.where('entity_ref', entityRef);
    return this.jobsOf(this.db, await query);
  }

  /**
   * How many jobs are queued or running (dry runs included) that
   * `requestedBy` asked for, and of the StatefulSet, across every replica.
   */
  async activeJobCounts(scope: {
    requestedBy: string;
    cluster: string;
    namespace: string;
    statefulSet: string;
  }): Promise<{ byUser: number; byStatefulSet: number }> {
    const count = async (where: Record<string, string>) => {
      const [row] = await this.db(JOBS)
        .whereIn('status', ACTIVE_STATUSES)
        .where(where)
        .count({ n: '*' });
      return Number(row.n);
    };
    return {
      byUser: await count({ requested_by: scope.requestedBy }),
      byStatefulSet: await count({
        cluster: scope.cluster,
        namespace: scope.namespace,
        stateful_set: scope.statefulSet,
      }),
    };
  }

  /** Deletes a job and its events, as if it had never been stored (a job withdrawn before it ran). */
  async deleteJob(id: string): Promise<void> {
    await this.db.transaction(tx => this.deleteJobsIn(tx, [id]));
  }

  private async deleteJobsIn(tx: Knex.Transaction, ids: string[]) {
    await tx(EVENTS).whereIn('job_id', ids).delete();
    await tx(CLAIMANTS).whereIn('job_id', ids).delete();
    await tx(JOBS).whereIn('id', ids).delete();
  }

  /**
   * Deletes, with their events, the jobs that finished more than
   * `olderThanMs` ago by the database's clock, a chunk per transaction, and
   * returns how many. A queued or running job is never deleted, however old.
   */
  async deleteFinishedFor(olderThanMs: number): Promise<number> {
    const before = new Date((await this.now()).getTime() - olderThanMs);
    let deleted = 0;
    for (;;) {
      const ids: string[] = (
        await this.db(JOBS)
          .select('id')
          .whereNotIn('status', ACTIVE_STATUSES)
          .where(q =>
            q
              .where('finished_at', '<', before)
              .orWhere(q2 =>
                q2.whereNull('finished_at').where('created_at', '<', before),
              ),
          )
          .limit(ID_CHUNK)
      ).map((row: { id: string }) => row.id);
      if (ids.length === 0) return deleted;
      await this.db.transaction(tx => this.deleteJobsIn(tx, ids));
      deleted += ids.length;
    }
  }

  /**
   * Records that the live process `instanceId` runs these (unfinished) jobs
   * now. An empty list is a no-op.
   */
  async heartbeat(jobIds: string[], instanceId: string): Promise<void> {
    const at = await this.now();
    for (const ids of chunks([...new Set(jobIds)], ID_CHUNK)) {
      await this.db(JOBS)
        .whereIn('id', ids)
        .whereIn('status', ACTIVE_STATUSES)
        .update({ owner_instance: instanceId, heartbeat_at: at });
    }
  }

  /**
   * Makes `instanceId` the owner of an unfinished job, with a fresh
   * heartbeat. Returns false when the job is unknown or already finished.
   */
  async claim(jobId: string, instanceId: string): Promise<boolean> {
    const count = await this.db(JOBS)
      .where({ id: jobId })
      .whereIn('status', ACTIVE_STATUSES)
      .update({ owner_instance: instanceId, heartbeat_at: await this.now() });
    return count > 0;
  }

  /**
   * Marks every queued or running job whose last heartbeat (or, if it never
   * had one, its creation) is more than `staleAfterMs` old by the database's
   * clock as interrupted, with a final `job-finished` event, and returns those
   * jobs. Each job is re-checked and changed in its own transaction, so a job
   * that a live replica heartbeats meanwhile, or that another sweeper got
   * first, is left alone.
   */
  async markInterrupted(options: {
    staleAfterMs: number;
    reason: string;
  }): Promise<PruneJob[]> {
    const { reason } = options;
    const staleBefore = new Date(
      (await this.now()).getTime() - options.staleAfterMs,
    );
    const stale = (q: Knex.QueryBuilder) =>
      q
        .whereIn('status', ACTIVE_STATUSES)
        .where(q2 =>
          q2
            .where('heartbeat_at', '<', staleBefore)
            .orWhere(q3 =>
              q3
                .whereNull('heartbeat_at')
                .where('created_at', '<', staleBefore),
            ),
        );
    const candidates: Array<{ id: string }> = await stale(
      this.db(JOBS).select('id'),
    );
    const interrupted: PruneJob[] = [];
    for (const { id } of candidates) {
      // Read before the transaction: SQLite has one connection, and the transaction holds it.
      const finishedAt = await this.now();
      const job = await this.db.transaction(async tx => {
        const count = await stale(tx(JOBS).where({ id })).update({
          status: 'interrupted',
          finished_at: finishedAt,
          reason,
        });
        if (count === 0) return undefined;
        await this.appendEventIn(tx, {
          jobId: id,
          type: 'job-finished',
          status: 'interrupted',
          at: finishedAt.toISOString(),
          message: reason,
        });
        const row = await tx<JobRow>(JOBS).where({ id }).first();
        return (await this.jobsOf(tx, [row!]))[0];
      });
      if (job) interrupted.push(job);
    }
    return interrupted;
  }
}
