import { Knex } from 'knex';
import { openStoreDatabase, StoreOptions } from './migrate';
import { timestampToIso } from './timestamps';

const SIGHTINGS = 'pvc_pruner_orphan_sightings';
/** Rows per statement: 6 bound parameters each, well below SQLite's limit. */
const CHUNK = 500;
/**
 * Claims remembered in memory. Past this, the claim seen longest ago is
 * forgotten (least recently seen first); it is read back from the database
 * when a scan sees it again. About 200 bytes each.
 */
export const MAX_REMEMBERED_SIGHTINGS = 100_000;
/**
 * How often a claim a scan keeps seeing has its last sighting written again.
 * Far below the shortest retention (a day), so a claim that is still an
 * orphan is never taken for one no scan has seen.
 */
const REFRESH_LAST_SEEN_MS = 60 * 60 * 1000;

/** A claim a scan saw as an orphan. */
export interface OrphanSighting {
  uid: string;
  cluster: string;
  namespace: string;
  name: string;
}

interface SightingRow {
  uid: string;
  first_seen_at: Date | number | string;
}

interface Remembered {
  firstSeen: string;
  /** When this process last wrote its last sighting, by its monotonic clock. */
  writtenAt: number;
}

/** What a sighting store is made from, beyond a store's database. */
export interface OrphanSightingStoreOptions extends StoreOptions {
  /** Claims remembered in memory; MAX_REMEMBERED_SIGHTINGS unless told. */
  maxRemembered?: number;
  /** This process's monotonic clock in ms (performance.now); for tests. */
  monotonicNow?: () => number;
}

/**
 * Remembers, in the plugin database, when a scan first saw each claim (by
 * uid) as an orphan, and when one last did. A scan records what it sees in
 * one batch; claims this process saw within the last hour cost nothing, so
 * the card's re-scans and the fleet view do not write on every request.
 * Another replica's earlier sighting wins (insert, keeping a uid's first
 * sighting and moving only its last, then read back).
 */
export class OrphanSightingStore {
  /** Least recently seen first (a Map keeps insertion order). */
  private readonly remembered = new Map<string, Remembered>();
  private readonly maxRemembered: number;
  private readonly monotonicNow: () => number;

  static async create(
    options: OrphanSightingStoreOptions,
  ): Promise<OrphanSightingStore> {
    const { db, now } = await openStoreDatabase(options);
    return new OrphanSightingStore(db, now, options);
  }

  private constructor(
    private readonly db: Knex,
    /** The database's clock, which every replica shares, so that no replica's skew dates a sighting (or judges one's age). */
    readonly now: () => Promise<Date>,
    options: OrphanSightingStoreOptions,
  ) {
    this.maxRemembered = options.maxRemembered ?? MAX_REMEMBERED_SIGHTINGS;
    this.monotonicNow = options.monotonicNow ?? (() => performance.now());
  }

  /** Records the sightings, and answers each claim's first sighting (ISO), by uid. */
  async record(sightings: OrphanSighting[]): Promise<Map<string, string>> {
    const at = this.monotonicNow();
    const firstSeen = new Map<string, string>();
    const toWrite = new Map<string, OrphanSighting>();
    for (const s of sightings) {
      const known = this.remembered.get(s.uid);
      if (known && at - known.writtenAt < REFRESH_LAST_SEEN_MS) {
        this.remember(s.uid, known);
        firstSeen.set(s.uid, known.firstSeen);
      } else toWrite.set(s.uid, s);
    }
    if (toWrite.size > 0) {
      const seenAt = await this.now();
      const unknown = [...toWrite.values()];
      for (let i = 0; i < unknown.length; i += CHUNK) {
        const chunk = unknown.slice(i, i + CHUNK);
        await this.db(SIGHTINGS)
          .insert(
            chunk.map(s => ({
              uid: s.uid,
              cluster: s.cluster,
              namespace: s.namespace,
              name: s.name,
              first_seen_at: seenAt,
              last_seen_at: seenAt,
            })),
          )
          .onConflict('uid')
          .merge(['last_seen_at']);
        const rows = await this.db<SightingRow>(SIGHTINGS)
          .select('uid', 'first_seen_at')
          .whereIn(
            'uid',
            chunk.map(s => s.uid),
          );
        for (const row of rows) {
          const iso = timestampToIso(row.first_seen_at);
          this.remember(row.uid, { firstSeen: iso, writtenAt: at });
          firstSeen.set(row.uid, iso);
        }
      }
    }
    return firstSeen;
  }

  /**
   * Deletes the sightings of claims no scan has seen as orphans for
   * `olderThanMs`, by the database's clock, and returns how many.
   */
  async deleteNotSeenFor(olderThanMs: number): Promise<number> {
    const before = new Date((await this.now()).getTime() - olderThanMs);
    const deleted = await this.db(SIGHTINGS)
      .where(q =>
        q
          .where('last_seen_at', '<', before)
          .orWhere(q2 =>
            q2.whereNull('last_seen_at').where('first_seen_at', '<', before),
          ),
      )
      .delete();
    return Number(deleted);
  }

  /** Remembers the claim as the most recently seen, forgetting the least recently seen past the cap. */
  private remember(uid: string, value: Remembered) {
    this.remembered.delete(uid);
    this.remembered.set(uid, value);
    while (this.remembered.size > this.maxRemembered)
      this.remembered.delete(this.remembered.keys().next().value!);
  }
}
