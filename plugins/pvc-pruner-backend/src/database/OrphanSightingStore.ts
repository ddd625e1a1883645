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

/**
 * How long the claims with a sighting, as this process knows them, are
 * trusted before they are read again: another replica's sighting is
 * forgotten here at most this late after its claim is seen in use.
 */
const KNOWN_REFRESH_MS = 5 * 60 * 1000;

/** A claim a scan saw in use: by name, as a StatefulSet's in-use claims are reported. */
export interface InUseClaim {
  namespace: string;
  name: string;
}

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
  /** The uid of each claim with a sighting, by cluster, namespace and name; read from the database at most every KNOWN_REFRESH_MS. */
  private known?: { uids: Map<string, string>; readAt: number };

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
        const known = this.known?.uids;
        for (const s of chunk)
          if (known && known.size < this.maxRemembered)
            known.set(knownKey(s), s.uid);
      }
    }
    return firstSeen;
  }

  /**
   * Forgets the sightings of claims a scan saw in use, so that a claim
   * orphaned again is first seen anew and its grace starts over. Costs a
   * statement only for claims that have a sighting (as this process knows
   * them, read again every few minutes), in one batch.
   */
  async forgetInUse(cluster: string, claims: InUseClaim[]): Promise<number> {
    if (claims.length === 0) return 0;
    const known = await this.knownUids();
    const uids: string[] = [];
    for (const c of claims) {
      const key = knownKey({ cluster, ...c });
      const uid = known.get(key);
      if (uid === undefined) continue;
      uids.push(uid);
      known.delete(key);
      this.remembered.delete(uid);
    }
    let deleted = 0;
    for (let i = 0; i < uids.length; i += CHUNK)
      deleted += Number(
        await this.db(SIGHTINGS)
          .whereIn('uid', uids.slice(i, i + CHUNK))
          .delete(),
      );
    return deleted;
  }

  private async knownUids(): Promise<Map<string, string>> {
    const at = this.monotonicNow();
    if (this.known && at - this.known.readAt < KNOWN_REFRESH_MS)
      return this.known.uids;
    const rows: OrphanSighting[] = await this.db(SIGHTINGS)
      .select('uid', 'cluster', 'namespace', 'name')
      .limit(this.maxRemembered);
    this.known = {
      uids: new Map(rows.map(r => [knownKey(r), r.uid])),
      readAt: at,
    };
    // A sighting another replica forgot is forgotten here too: its claim's next first sighting is read back.
    const inDatabase = new Set(rows.map(r => r.uid));
    for (const uid of [...this.remembered.keys()])
      if (!inDatabase.has(uid)) this.remembered.delete(uid);
    return this.known.uids;
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
    // Read again when next needed: the rows deleted may be known here.
    this.known = undefined;
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

function knownKey(claim: { cluster: string; namespace: string; name: string }) {
  return `${claim.cluster}\n${claim.namespace}\n${claim.name}`;
}
