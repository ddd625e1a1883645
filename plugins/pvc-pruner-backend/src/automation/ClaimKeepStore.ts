import { ConflictError, InputError } from '@backstage/errors';
import type { ClaimKeep } from 'backstage-plugin-pvc-pruner-common';
import { Knex } from 'knex';
import { openStoreDatabase, StoreOptions } from '../database/migrate';
import { Timestamp, timestampToIso } from '../database/timestamps';
import type { ClaimKeeps } from './types';

const KEEPS = 'pvc_pruner_claim_keeps';
const DELETING = 'pvc_pruner_claim_deleting';
/** The prune jobs (see PruneJobStore): a mark counts while its job is queued or running. */
const JOBS = 'pvc_pruner_jobs';
const ACTIVE_JOB_STATUSES = ['queued', 'running'];
/** Uids per `where in`. */
const READ_CHUNK = 500;
/** The longest reason kept, as the spec allows. */
export const MAX_KEEP_REASON = 500;
const MAX_REF = 1024;
const MAX_NAME = 255;
const MAX_UID = 64;
/** The furthest end a keep may have: a keep for longer has no end. */
export const MAX_KEEP_MS = 366 * 24 * 60 * 60 * 1000;

/** A keep to store: who keeps which claim of which entity, why, and until when. */
export interface NewClaimKeep {
  cluster: string;
  namespace: string;
  claimName: string;
  claimUid: string;
  entityRef: string;
  reason: string;
  /** The end of the keep (ISO); absent, it lasts until removed. */
  until?: string;
  /** The user entity ref of who keeps it. */
  keptBy: string;
}

interface KeepRow {
  uid: string;
  reason: string;
  until: Timestamp | null;
  kept_by: string;
  kept_at: Timestamp;
}

function keepOf(row: KeepRow): ClaimKeep {
  return {
    source: 'card',
    reason: row.reason,
    ...(row.until !== null ? { until: timestampToIso(row.until) } : {}),
    keptBy: row.kept_by,
    keptAt: timestampToIso(row.kept_at),
  };
}

/** Whether the keep lasts longer than the one shown: one with no end lasts longest. */
function endsLater(row: KeepRow, shown: ClaimKeep): boolean {
  if (shown.until === undefined) return false;
  if (row.until === null) return true;
  return Date.parse(timestampToIso(row.until)) > Date.parse(shown.until);
}

function capped(what: string, value: string, max: number) {
  if (value.length === 0 || value.length > max)
    throw new InputError(`${what} must be 1 to ${max} characters long`);
  return value;
}

/**
 * The claims kept from automatic pruning through the card, and the fence
 * against an automatic delete of a kept claim (see ClaimKeeps). Whether a
 * keep is in force is judged by the database's clock.
 */
export class ClaimKeepStore implements ClaimKeeps {
  static async create(
    options: StoreOptions & {
      /**
       * How long a mark refuses keeps even once its job has ended: the
       * Lease's duration. A job the sweeper took for dead (its heartbeat
       * failed) may still hold its Lease and send the delete it marked for.
       */
      markTrustMs?: number;
    },
  ): Promise<ClaimKeepStore> {
    const { db, now } = await openStoreDatabase(options);
    return new ClaimKeepStore(db, now, options.markTrustMs ?? 0);
  }

  private constructor(
    private readonly db: Knex,
    private readonly now: () => Promise<Date>,
    private readonly markTrustMs: number,
  ) {}

  /**
   * Keeps the claim through the entity, replacing that entity's earlier keep
   * of it only. Then looks for a deleting mark of a job still queued or
   * running: with one, this entity's earlier keep is put back (or this one
   * removed) and a ConflictError thrown, since the job may not have seen it.
   */
  async keep(keep: NewClaimKeep): Promise<ClaimKeep> {
    const reason = capped('A keep reason', keep.reason.trim(), MAX_KEEP_REASON);
    const now = await this.now();
    const until = keep.until ? new Date(keep.until) : null;
    if (until && Number.isNaN(until.getTime()))
      throw new InputError(
        `A keep's end "${keep.until}" is not a date and time`,
      );
    if (until && !(until > now))
      throw new InputError(
        `A keep's end must be in the future; ${keep.until} has passed`,
      );
    if (until && until.getTime() - now.getTime() > MAX_KEEP_MS)
      throw new InputError(
        `A keep's end must be at most a year ahead; ${keep.until} is further (leave it out to keep the claim until you remove the keep)`,
      );
    const row = {
      cluster: capped('A cluster name', keep.cluster, MAX_NAME),
      uid: capped("A claim's uid", keep.claimUid, MAX_UID),
      namespace: capped('A namespace', keep.namespace, MAX_NAME),
      claim_name: capped("A claim's name", keep.claimName, MAX_NAME),
      entity_ref: capped('An entity ref', keep.entityRef, MAX_REF),
      reason,
      until,
      kept_by: capped('Who keeps a claim', keep.keptBy, MAX_REF),
      kept_at: now,
    };
    const key = {
      cluster: row.cluster,
      uid: row.uid,
      entity_ref: row.entity_ref,
    };
    const earlier = await this.db(KEEPS).where(key).first();
    await this.db(KEEPS)
      .insert(row)
      .onConflict(['cluster', 'uid', 'entity_ref'])
      .merge([
        'namespace',
        'claim_name',
        'reason',
        'until',
        'kept_by',
        'kept_at',
      ]);
    const deleting = await this.liveMark(row.cluster, row.uid);
    if (deleting) {
      if (earlier) await this.db(KEEPS).where(key).update(earlier);
      else await this.db(KEEPS).where(key).delete();
      throw new ConflictError(
        `An automatic prune is deleting ${keep.claimName} right now (job ${deleting.job_id}); it can no longer be kept`,
      );
    }
    return keepOf({ ...row, until: row.until });
  }

  /** Stops keeping the claim through the entity (another entity's keep of it stays); true when it was kept through it. */
  async unkeep(
    cluster: string,
    uid: string,
    entityRef: string,
  ): Promise<boolean> {
    const deleted = await this.db(KEEPS)
      .where({ cluster, uid, entity_ref: entityRef })
      .delete();
    return deleted > 0;
  }

  async keepsOf(
    cluster: string,
    uids: readonly string[],
  ): Promise<Map<string, ClaimKeep>> {
    const keeps = new Map<string, ClaimKeep>();
    if (uids.length === 0) return keeps;
    const now = await this.now();
    const unique = [...new Set(uids)];
    for (let i = 0; i < unique.length; i += READ_CHUNK) {
      const rows = await this.inForce(cluster, now).whereIn(
        'uid',
        unique.slice(i, i + READ_CHUNK),
      );
      for (const row of rows) {
        const shown = keeps.get(row.uid);
        if (!shown || endsLater(row, shown)) keeps.set(row.uid, keepOf(row));
      }
    }
    return keeps;
  }

  async markDeleting(
    cluster: string,
    uid: string,
    jobId: string,
  ): Promise<void> {
    await this.db(DELETING)
      .insert({ cluster, uid, job_id: jobId, marked_at: await this.now() })
      .onConflict(['cluster', 'uid'])
      .merge(['job_id', 'marked_at']);
  }

  /** Lifts the job's mark when it did not delete the claim after all, so that it can be kept again. */
  async unmarkDeleting(
    cluster: string,
    uid: string,
    jobId: string,
  ): Promise<void> {
    await this.db(DELETING).where({ cluster, uid, job_id: jobId }).delete();
  }

  async keptNow(cluster: string, uid: string): Promise<ClaimKeep | undefined> {
    const keeps = await this.keepsOf(cluster, [uid]);
    return keeps.get(uid);
  }

  /**
   * Deletes keeps that ended more than `olderThanMs` ago and deleting marks
   * older than that, by the database's clock; returns how many of each.
   */
  async deleteOlderThan(
    olderThanMs: number,
  ): Promise<{ keeps: number; marks: number }> {
    const before = new Date((await this.now()).getTime() - olderThanMs);
    const keeps = await this.db(KEEPS).where('until', '<', before).delete();
    const marks = await this.db(DELETING)
      .where('marked_at', '<', before)
      .delete();
    return { keeps: Number(keeps), marks: Number(marks) };
  }

  /**
   * The claim's deleting mark, unless its job has ended and the mark is
   * older than a Lease (a crashed job's mark must not refuse keeps until
   * retention, but a job only taken for dead may still send its delete).
   */
  private async liveMark(
    cluster: string,
    uid: string,
  ): Promise<{ job_id: string } | undefined> {
    const trustedSince = new Date(
      (await this.now()).getTime() - this.markTrustMs,
    );
    return this.db(`${DELETING} as mark`)
      .leftJoin(`${JOBS} as job`, 'job.id', 'mark.job_id')
      .where({ 'mark.cluster': cluster, 'mark.uid': uid })
      .where(q =>
        q
          .whereNull('job.status')
          .orWhereIn('job.status', ACTIVE_JOB_STATUSES)
          .orWhere('mark.marked_at', '>', trustedSince),
      )
      .first('mark.job_id');
  }

  private inForce(cluster: string, now: Date) {
    return this.db<KeepRow>(KEEPS)
      .select('uid', 'reason', 'until', 'kept_by', 'kept_at')
      .where('cluster', cluster)
      .where(q => q.whereNull('until').orWhere('until', '>', now));
  }
}
