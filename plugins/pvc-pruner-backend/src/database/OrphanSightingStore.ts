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
 * How long this process trusts what it knows of a claim's sighting (that it
 * has none, having just forgotten it; or its first sighting, remembered)
 * before it asks the database again: another replica may have recorded or
 * forgotten it since.
 */
const RECHECK_MS = 5 * 60 * 1000;

/** A claim seen in use (by a scan, or mounted by a pod a watch cache holds): by name, as both report it. */
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
  /** When this process last read or wrote its row, by its monotonic clock. */
  checkedAt: number;
  /** Its cluster, namespace and name ({@link nameKey}). */
  key: string;
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
 * one batch; a claim this process saw costs nothing for a few minutes, then
 * a read (another replica may have forgotten it), and a write once an hour,
 * so the card's re-scans and the fleet view do not write on every request.
 * Another replica's earlier sighting wins (insert, keeping a uid's first
 * sighting and moving only its last, then read back).
 */
export class OrphanSightingStore {
  /** Least recently seen first (a Map keeps insertion order). */
  private readonly remembered = new Map<string, Remembered>();
  private readonly maxRemembered: number;
  private readonly monotonicNow: () => number;
  /** The uid of each remembered claim, by {@link nameKey}. */
  private readonly rememberedByName = new Map<string, string>();
  /**
   * Claims (by {@link nameKey}) this process forgot, and when: none has a
   * row unless another replica recorded it since. Oldest first, capped.
   */
  private readonly forgotten = new Map<string, number>();

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
    const toCheck: OrphanSighting[] = [];
    for (const s of sightings) {
      this.forgotten.delete(nameKey(s));
      const known = this.remembered.get(s.uid);
      if (!known || at - known.writtenAt >= REFRESH_LAST_SEEN_MS)
        toWrite.set(s.uid, s);
      else if (at - known.checkedAt >= RECHECK_MS) toCheck.push(s);
      else {
        this.remember(s.uid, known);
        firstSeen.set(s.uid, known.firstSeen);
      }
    }
    // Another replica may have forgotten a claim remembered here: one without a row is written anew.
    for (let i = 0; i < toCheck.length; i += CHUNK) {
      const chunk = toCheck.slice(i, i + CHUNK);
      const rows = await this.firstSeenInDatabase(chunk.map(s => s.uid));
      for (const s of chunk) {
        const iso = rows.get(s.uid);
        if (iso === undefined) {
          toWrite.set(s.uid, s);
          continue;
        }
        const known = this.remembered.get(s.uid);
        if (known)
          this.remember(s.uid, { ...known, firstSeen: iso, checkedAt: at });
        firstSeen.set(s.uid, iso);
      }
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
        const rows = await this.firstSeenInDatabase(chunk.map(s => s.uid));
        for (const s of chunk) {
          const iso = rows.get(s.uid);
          if (iso === undefined) continue;
          this.remember(s.uid, {
            firstSeen: iso,
            writtenAt: at,
            checkedAt: at,
            key: nameKey(s),
          });
          firstSeen.set(s.uid, iso);
        }
      }
    }
    return firstSeen;
  }

  /**
   * Forgets the sightings of claims seen in use, by cluster, namespace and
   * name (every claim of that name, whatever its uid), so that a claim
   * orphaned again is first seen anew and its grace starts over. Batched;
   * no cap. With `skipRecentlyForgotten` (a scan, which sees the same claims
   * in use again and again), skips the claims this process forgot within a
   * few minutes and has not recorded since; another replica's sighting of
   * one of those is forgotten by the watch caches' sweep
   * (the InUseClaimsSweeper), which sends only newly used claims.
   */
  async forgetInUse(
    cluster: string,
    claims: InUseClaim[],
    options: { skipRecentlyForgotten?: boolean } = {},
  ): Promise<number> {
    const at = this.monotonicNow();
    const names = new Map<string, InUseClaim>();
    for (const c of claims) {
      const key = nameKey({ cluster, ...c });
      const forgottenAt = this.forgotten.get(key);
      if (
        options.skipRecentlyForgotten &&
        forgottenAt !== undefined &&
        at - forgottenAt < RECHECK_MS
      )
        continue;
      names.set(key, c);
    }
    let deleted = 0;
    const pending = [...names];
    for (let i = 0; i < pending.length; i += CHUNK) {
      const chunk = pending.slice(i, i + CHUNK);
      deleted += Number(
        await this.db(SIGHTINGS)
          .where('cluster', cluster)
          .whereIn(
            ['namespace', 'name'],
            chunk.map(([, c]) => [c.namespace, c.name]),
          )
          .delete(),
      );
      for (const [key] of chunk) {
        const uid = this.rememberedByName.get(key);
        if (uid !== undefined) this.forget(uid);
        this.forgotten.delete(key);
        this.forgotten.set(key, at);
      }
      while (this.forgotten.size > this.maxRemembered)
        this.forgotten.delete(this.forgotten.keys().next().value!);
    }
    return deleted;
  }

  /**
   * Each claim's first sighting as the database has it now, by uid, read
   * past this process's memory: another replica may have seen the claim in
   * use since (and forgotten its sighting), which this process's memory
   * would not know yet. A claim without a row has no first sighting.
   */
  async firstSeenInDatabase(
    uids: readonly string[],
  ): Promise<Map<string, string>> {
    const firstSeen = new Map<string, string>();
    for (let i = 0; i < uids.length; i += CHUNK) {
      const rows = await this.db<SightingRow>(SIGHTINGS)
        .select('uid', 'first_seen_at')
        .whereIn('uid', uids.slice(i, i + CHUNK));
      for (const row of rows)
        firstSeen.set(row.uid, timestampToIso(row.first_seen_at));
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
    this.rememberedByName.set(value.key, uid);
    while (this.remembered.size > this.maxRemembered)
      this.forget(this.remembered.keys().next().value!);
  }

  private forget(uid: string) {
    const known = this.remembered.get(uid);
    if (!known) return;
    this.remembered.delete(uid);
    if (this.rememberedByName.get(known.key) === uid)
      this.rememberedByName.delete(known.key);
  }
}

function nameKey(claim: { cluster: string; namespace: string; name: string }) {
  return `${claim.cluster}\n${claim.namespace}\n${claim.name}`;
}
