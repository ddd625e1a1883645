import { Knex } from 'knex';
import { openStoreDatabase, StoreOptions } from './migrate';
import { timestampToIso } from './timestamps';

const SIGHTINGS = 'pvc_pruner_orphan_sightings';
/** Rows per statement: 5 bound parameters each, well below SQLite's limit. */
const CHUNK = 500;

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

/**
 * Remembers, in the plugin database, when a scan first saw each claim (by
 * uid) as an orphan. A scan records what it sees in one batch; claims this
 * process already knows cost nothing, so the card's re-scans and the fleet
 * view do not write on every request. Another replica's earlier sighting
 * wins (insert, ignoring a uid already there, then read back).
 */
export class OrphanSightingStore {
  private readonly known = new Map<string, string>();

  static async create(options: StoreOptions): Promise<OrphanSightingStore> {
    const { db, now } = await openStoreDatabase(options);
    return new OrphanSightingStore(db, now);
  }

  private constructor(
    private readonly db: Knex,
    /** The database's clock, which every replica shares, so that no replica's skew dates a sighting. */
    private readonly now: () => Promise<Date>,
  ) {}

  /** Records the sightings not recorded before, and answers each claim's first sighting (ISO), by uid. */
  async record(sightings: OrphanSighting[]): Promise<Map<string, string>> {
    const unknown = [
      ...new Map(
        sightings.filter(s => !this.known.has(s.uid)).map(s => [s.uid, s]),
      ).values(),
    ];
    if (unknown.length > 0) {
      const seenAt = await this.now();
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
            })),
          )
          .onConflict('uid')
          .ignore();
        const rows = await this.db<SightingRow>(SIGHTINGS)
          .select('uid', 'first_seen_at')
          .whereIn(
            'uid',
            chunk.map(s => s.uid),
          );
        for (const row of rows)
          this.known.set(row.uid, timestampToIso(row.first_seen_at));
      }
    }
    const firstSeen = new Map<string, string>();
    for (const s of sightings) {
      const at = this.known.get(s.uid);
      if (at) firstSeen.set(s.uid, at);
    }
    return firstSeen;
  }
}
