import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import { openStoreDatabase, StoreOptions } from '../database/migrate';
import { Timestamp, timestampToIso } from '../database/timestamps';

const ANNOUNCEMENTS = 'pvc_pruner_auto_prune_announcements';
/** Uids per `where in`. */
const CHUNK = 500;
/** Rows per insert, within SQLite's bound on parameters. */
const INSERT_CHUNK = 100;

/** A claim an automatic run planned (as eligible or upcoming). */
export interface AnnouncedClaim {
  cluster: string;
  uid: string;
}

/** What `announce` answers: the database's time of the run, and when each planned claim was first announced. */
export interface Announcements {
  now: Date;
  /** By {@link announcementKey}. */
  announcedAt: Map<string, string>;
}

export const announcementKey = (cluster: string, uid: string) =>
  `${cluster}\n${uid}`;

interface AnnouncementRow {
  cluster: string;
  uid: string;
  announced_at: Timestamp;
}

/**
 * When automatic pruning first announced each claim to its owners, by the
 * database's clock: no claim is deleted automatically before
 * `notifyBefore` has passed since. A claim no longer planned loses its
 * announcement, so planning it again announces it afresh.
 */
export class AnnouncementStore {
  static async create(options: StoreOptions): Promise<AnnouncementStore> {
    const { db, now } = await openStoreDatabase(options);
    return new AnnouncementStore(db, now);
  }

  private constructor(
    private readonly db: Knex,
    private readonly now: () => Promise<Date>,
  ) {}

  /**
   * Records one run's planned claims: a claim planned for the first time is
   * announced now, one planned before keeps its first announcement. Then
   * forgets the announcements of every claim not planned this run, except in
   * `unreadClusters`, whose claims the run could not see.
   */
  async announce(
    planned: readonly AnnouncedClaim[],
    unreadClusters: readonly string[],
  ): Promise<Announcements> {
    const now = await this.now();
    const run = randomUUID();
    const unique = new Map(
      planned.map(c => [announcementKey(c.cluster, c.uid), c] as const),
    );
    const rows = [...unique.values()].map(c => ({
      cluster: c.cluster,
      uid: c.uid,
      announced_at: now,
      planned_at: now,
      planned_by: run,
    }));
    for (let i = 0; i < rows.length; i += INSERT_CHUNK)
      await this.db(ANNOUNCEMENTS)
        .insert(rows.slice(i, i + INSERT_CHUNK))
        .onConflict(['cluster', 'uid'])
        .merge(['planned_at', 'planned_by']);
    const stale = this.db(ANNOUNCEMENTS).whereNot('planned_by', run);
    if (unreadClusters.length > 0)
      stale.whereNotIn('cluster', [...unreadClusters]);
    await stale.delete();
    const announcedAt = new Map<string, string>();
    const read = await this.db<AnnouncementRow>(ANNOUNCEMENTS)
      .select('cluster', 'uid', 'announced_at')
      .where('planned_by', run);
    for (const row of read)
      announcedAt.set(
        announcementKey(row.cluster, row.uid),
        timestampToIso(row.announced_at),
      );
    return { now, announcedAt };
  }

  /** When the claims of a cluster were first announced, by uid (a claim not announced is absent), and the database's time. */
  async announcementsOf(
    cluster: string,
    uids: readonly string[],
  ): Promise<{ now: Date; announcedAt: Map<string, string> }> {
    const announcedAt = new Map<string, string>();
    const unique = [...new Set(uids)];
    for (let i = 0; i < unique.length; i += CHUNK) {
      const rows = await this.db<AnnouncementRow>(ANNOUNCEMENTS)
        .select('uid', 'announced_at')
        .where('cluster', cluster)
        .whereIn('uid', unique.slice(i, i + CHUNK));
      for (const row of rows)
        announcedAt.set(row.uid, timestampToIso(row.announced_at));
    }
    return { now: await this.now(), announcedAt };
  }

  /** Deletes the announcements no run has planned for `olderThanMs` (of clusters no longer read, say); answers how many. */
  async deleteOlderThan(olderThanMs: number): Promise<number> {
    const before = new Date((await this.now()).getTime() - olderThanMs);
    return Number(
      await this.db(ANNOUNCEMENTS).where('planned_at', '<', before).delete(),
    );
  }

  /**
   * Forgets every announcement. Called when a backend starts with automatic
   * pruning off: owners stop hearing about claims then, so when it is turned
   * on again, every claim must be announced afresh before it is deleted.
   */
  async clear(): Promise<void> {
    await this.db(ANNOUNCEMENTS).delete();
  }
}
