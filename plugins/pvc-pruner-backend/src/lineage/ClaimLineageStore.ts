import { Knex } from 'knex';
import { openStoreDatabase, StoreOptions } from '../database/migrate';
import { timestampToIso, Timestamp } from '../database/timestamps';
import { MAX_CLAIMANTS } from '../ownership/ClaimantIndex';
import type { StillReferenced } from './ReferencedClaimUids';

const LINEAGE = 'pvc_pruner_claim_lineage';
/** Rows per statement: 10 bound parameters each, well below SQLite's limit. */
const CHUNK = 300;
/** Uids per `where in` when reading. */
const READ_CHUNK = 500;
/**
 * Claims remembered in memory. Past this, the claim seen longest ago is
 * forgotten (least recently seen first); it is written again when a scan
 * sees it again. About 300 bytes each.
 */
export const MAX_REMEMBERED_LINEAGE = 100_000;
/**
 * How often the lineage of a claim a scan keeps seeing, unchanged, is
 * written again. Far below the shortest retention (a day), so the lineage
 * of a claim that still exists is never taken for one nobody has seen.
 */
const REFRESH_LAST_SEEN_MS = 60 * 60 * 1000;
/**
 * Claimants kept per claim: the most a StatefulSet may have before
 * pvc-pruner takes its claimants as a catalog error and shows it to nobody
 * (ClaimantIndex's MAX_CLAIMANTS). More are recorded as `claimantsCrowded`.
 */
export const MAX_STORED_CLAIMANTS = MAX_CLAIMANTS;
/** The longest string kept in a column (names, refs); what is longer is not recorded, never cut. */
const MAX_STRING = 255;
/** The longest uid kept. */
const MAX_UID = 64;
/** The largest ordinal the portable integer column holds. */
const MAX_ORDINAL = 2 ** 31 - 1;

/** What a claim belonged to, as a scan saw it. */
export interface ClaimLineageRecord {
  cluster: string;
  namespace: string;
  claimUid: string;
  /** The StatefulSet whose volumeClaimTemplate and ordinal name the claim. */
  statefulSet: { name: string; uid: string };
  template: string;
  ordinal: number;
  /** The catalog entities whose annotations map to the StatefulSet, by entity ref. */
  claimants: string[];
  /**
   * Each claimant's catalog `metadata.uid` when it was recorded, by ref: what
   * tells the entity that claimed the StatefulSet from one registered later
   * under the same name. A claimant without one cannot be verified.
   */
  claimantUids: Record<string, string>;
}

/** A claim's lineage as the database keeps it. */
export interface ClaimLineage extends ClaimLineageRecord {
  /** `<template>-<statefulSet>-<ordinal>`. */
  claimName: string;
  /**
   * More entities claimed the StatefulSet than were kept (see
   * MAX_STORED_CLAIMANTS), or a ref too long to keep: `claimants` is not
   * the whole list, and must not be taken for it.
   */
  claimantsCrowded: boolean;
  /** When a scan last saw the claim with this lineage, by the database's clock (ISO). */
  lastSeenAt: string;
}

interface LineageRow {
  cluster: string;
  claim_uid: string;
  namespace: string;
  stateful_set: string;
  stateful_set_uid: string;
  template: string;
  ordinal: number | string;
  claimants: string;
  claimant_uids: string | null;
  claimants_crowded: boolean | number;
  last_seen_at: Timestamp;
}

type RowToWrite = Omit<LineageRow, 'last_seen_at'> & {
  claimants_crowded: boolean;
};

interface Remembered {
  /** What was written, but the time. */
  fingerprint: string;
  /** When this process last wrote it, by its monotonic clock. */
  writtenAt: number;
}

/** What a lineage store is made from, beyond a store's database. */
export interface ClaimLineageStoreOptions extends StoreOptions {
  /** Claims remembered in memory; MAX_REMEMBERED_LINEAGE unless told. */
  maxRemembered?: number;
  /** This process's monotonic clock in ms (performance.now); for tests. */
  monotonicNow?: () => number;
}

/** The row for a record, or undefined when something in it is longer than the database keeps. */
function rowOf(r: ClaimLineageRecord): RowToWrite | undefined {
  const strings = [r.cluster, r.namespace, r.statefulSet.name, r.template];
  if (
    strings.some(s => !s || s.length > MAX_STRING) ||
    !r.claimUid ||
    r.claimUid.length > MAX_UID ||
    !r.statefulSet.uid ||
    r.statefulSet.uid.length > MAX_UID ||
    !Number.isSafeInteger(r.ordinal) ||
    r.ordinal < 0 ||
    r.ordinal > MAX_ORDINAL
  )
    return undefined;
  const refs = [...new Set(r.claimants)].sort();
  const keepable = refs.filter(ref => ref.length <= MAX_STRING);
  const claimants = keepable.slice(0, MAX_STORED_CLAIMANTS);
  const uids = Object.fromEntries(
    claimants.flatMap(ref => {
      const uid = r.claimantUids[ref];
      return uid && uid.length <= MAX_UID ? [[ref, uid]] : [];
    }),
  );
  return {
    cluster: r.cluster,
    claim_uid: r.claimUid,
    namespace: r.namespace,
    stateful_set: r.statefulSet.name,
    stateful_set_uid: r.statefulSet.uid,
    template: r.template,
    ordinal: r.ordinal,
    claimants: JSON.stringify(claimants),
    claimant_uids: JSON.stringify(uids),
    claimants_crowded: claimants.length < refs.length,
  };
}

function claimantsOf(json: string): { refs: string[]; readable: boolean } {
  try {
    const parsed: unknown = JSON.parse(json);
    if (Array.isArray(parsed) && parsed.every(r => typeof r === 'string'))
      return { refs: parsed, readable: true };
  } catch {
    // fall through
  }
  return { refs: [], readable: false };
}

/** The recorded uids by ref; none for a row written before uids were, or one that cannot be read. */
function claimantUidsOf(json: string | null): Record<string, string> {
  try {
    const parsed: unknown = json ? JSON.parse(json) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return Object.fromEntries(
        Object.entries(parsed).filter(([, uid]) => typeof uid === 'string'),
      );
  } catch {
    // fall through
  }
  return {};
}

function lineageOfRow(row: LineageRow): ClaimLineage {
  const { refs, readable } = claimantsOf(row.claimants);
  const ordinal = Number(row.ordinal);
  return {
    cluster: row.cluster,
    namespace: row.namespace,
    claimUid: row.claim_uid,
    claimName: `${row.template}-${row.stateful_set}-${ordinal}`,
    statefulSet: { name: row.stateful_set, uid: row.stateful_set_uid },
    template: row.template,
    ordinal,
    claimants: refs,
    claimantUids: claimantUidsOf(row.claimant_uids),
    // A list that cannot be read is not the whole list.
    claimantsCrowded: Boolean(row.claimants_crowded) || !readable,
    lastSeenAt: timestampToIso(row.last_seen_at),
  };
}

/**
 * Remembers, in the plugin database, what each claim (by cluster and uid)
 * belonged to: its StatefulSet's name and uid, template and ordinal, and
 * the StatefulSet's claimants, with when a scan last saw it so, by the
 * database's clock. Writes cheaply: one upsert per batch, and a claim whose
 * lineage this process wrote within the hour, unchanged, costs nothing.
 * Bounded: claimants per claim (MAX_STORED_CLAIMANTS), string lengths, and
 * retention (deleteNotSeenFor).
 */
export class ClaimLineageStore {
  /** Least recently seen first (a Map keeps insertion order). */
  private readonly remembered = new Map<string, Remembered>();
  private readonly maxRemembered: number;
  private readonly monotonicNow: () => number;

  static async create(
    options: ClaimLineageStoreOptions,
  ): Promise<ClaimLineageStore> {
    const { db, now } = await openStoreDatabase(options);
    return new ClaimLineageStore(db, now, options);
  }

  private constructor(
    private readonly db: Knex,
    /** The database's clock, which every replica shares, so that no replica's skew dates a row. */
    private readonly now: () => Promise<Date>,
    options: ClaimLineageStoreOptions,
  ) {
    this.maxRemembered = options.maxRemembered ?? MAX_REMEMBERED_LINEAGE;
    this.monotonicNow = options.monotonicNow ?? (() => performance.now());
  }

  /**
   * Records the lineage of claims seen now. A claim whose lineage this
   * process wrote less than an hour ago, unchanged, is not written; a
   * changed StatefulSet uid or claimants are written at once. Records with
   * a string longer than the database keeps are left out.
   */
  async record(records: ClaimLineageRecord[]): Promise<void> {
    const at = this.monotonicNow();
    const toWrite = new Map<string, { row: RowToWrite; fingerprint: string }>();
    for (const record of records) {
      const row = rowOf(record);
      if (!row) continue;
      const key = `${row.cluster}\n${row.claim_uid}`;
      const fingerprint = JSON.stringify([
        row.namespace,
        row.stateful_set,
        row.stateful_set_uid,
        row.template,
        row.ordinal,
        row.claimants,
        row.claimant_uids,
        row.claimants_crowded,
      ]);
      const known = this.remembered.get(key);
      if (
        known &&
        known.fingerprint === fingerprint &&
        at - known.writtenAt < REFRESH_LAST_SEEN_MS
      ) {
        this.remember(key, known);
        toWrite.delete(key);
      } else toWrite.set(key, { row, fingerprint });
    }
    if (toWrite.size === 0) return;
    const seenAt = await this.now();
    const entries = [...toWrite];
    for (let i = 0; i < entries.length; i += CHUNK) {
      const chunk = entries.slice(i, i + CHUNK);
      await this.db(LINEAGE)
        .insert(chunk.map(([, { row }]) => ({ ...row, last_seen_at: seenAt })))
        .onConflict(['cluster', 'claim_uid'])
        .merge();
      for (const [key, { fingerprint }] of chunk)
        this.remember(key, { fingerprint, writtenAt: at });
    }
  }

  /** The recorded lineage of these claims of a cluster, by claim uid; claims never recorded are absent. */
  async lineageOf(
    cluster: string,
    claimUids: string[],
  ): Promise<Map<string, ClaimLineage>> {
    const found = new Map<string, ClaimLineage>();
    const uids = [...new Set(claimUids)];
    for (let i = 0; i < uids.length; i += READ_CHUNK) {
      const rows = await this.db<LineageRow>(LINEAGE)
        .where('cluster', cluster)
        .whereIn('claim_uid', uids.slice(i, i + READ_CHUNK));
      for (const row of rows) found.set(row.claim_uid, lineageOfRow(row));
    }
    return found;
  }

  /**
   * The recorded claims of every StatefulSet of this name in the namespace,
   * past incarnations (other uids) included, by template and ordinal.
   */
  async lineageByStatefulSetName(
    cluster: string,
    namespace: string,
    name: string,
  ): Promise<ClaimLineage[]> {
    const rows = await this.db<LineageRow>(LINEAGE)
      .where({ cluster, namespace, stateful_set: name })
      .orderBy([
        { column: 'template' },
        { column: 'ordinal' },
        { column: 'claim_uid' },
      ]);
    return rows.map(lineageOfRow);
  }

  /**
   * The recorded claims of a cluster whose claimants include this entity,
   * at most `limit` of them, most recently seen first. Matched by text in
   * the database and then exactly here, so a ref that only contains this
   * one is never taken for it. No index serves the text match: it reads the
   * cluster's rows, which retention bounds (a table of claimants, keyed by
   * entity ref, would make it an index lookup).
   */
  async lineageClaimedBy(
    cluster: string,
    entityRef: string,
    limit: number,
  ): Promise<ClaimLineage[]> {
    const quoted = JSON.stringify(entityRef).replace(/[\\%_]/g, c => `\\${c}`);
    const rows = await this.db<LineageRow>(LINEAGE)
      .where('cluster', cluster)
      .andWhereRaw(`claimants like ? escape '\\'`, [`%${quoted}%`])
      .orderBy('last_seen_at', 'desc')
      .limit(limit);
    return rows.map(lineageOfRow).filter(l => l.claimants.includes(entityRef));
  }

  /**
   * The namespaces of a cluster where claims have lineage (only `namespace`,
   * when given), at most `limit`: those where a scan saw a StatefulSet
   * most recently first, then by name.
   */
  async namespacesWithLineage(
    cluster: string,
    limit: number,
    namespace?: string,
  ): Promise<string[]> {
    const rows: Array<{ namespace: string }> = await this.db(LINEAGE)
      .where('cluster', cluster)
      .modify(q => {
        if (namespace !== undefined) q.where('namespace', namespace);
      })
      .select('namespace')
      .max({ seen: 'last_seen_at' })
      .groupBy('namespace')
      .orderBy([{ column: 'seen', order: 'desc' }, { column: 'namespace' }])
      .limit(limit);
    return rows.map(r => r.namespace);
  }

  /**
   * Deletes the lineage of claims no scan has seen for `olderThanMs`, by the
   * database's clock, and returns how many. With `stillReferenced`, the
   * lineage of a claim a cluster still references is kept however old, and
   * so is all of a cluster it cannot answer for.
   */
  async deleteNotSeenFor(
    olderThanMs: number,
    stillReferenced?: StillReferenced,
  ): Promise<number> {
    const before = new Date((await this.now()).getTime() - olderThanMs);
    if (!stillReferenced)
      return Number(
        await this.db(LINEAGE).where('last_seen_at', '<', before).delete(),
      );
    const clusters = await this.db<LineageRow>(LINEAGE)
      .where('last_seen_at', '<', before)
      .distinct('cluster');
    let deleted = 0;
    for (const { cluster } of clusters) {
      const kept = stillReferenced(cluster);
      if (kept) deleted += await this.deleteUnreferenced(cluster, before, kept);
    }
    return deleted;
  }

  /** Deletes a cluster's lineage seen before `before` whose claim uid is not in `kept`, a page at a time. */
  private async deleteUnreferenced(
    cluster: string,
    before: Date,
    kept: ReadonlySet<string>,
  ): Promise<number> {
    let deleted = 0;
    let after = '';
    for (;;) {
      const page = await this.db<LineageRow>(LINEAGE)
        .where('cluster', cluster)
        .andWhere('last_seen_at', '<', before)
        .andWhere('claim_uid', '>', after)
        .orderBy('claim_uid')
        .limit(READ_CHUNK)
        .select('claim_uid');
      if (page.length === 0) return deleted;
      after = page[page.length - 1].claim_uid;
      const gone = page.map(r => r.claim_uid).filter(uid => !kept.has(uid));
      if (gone.length > 0)
        deleted += Number(
          await this.db(LINEAGE)
            .where('cluster', cluster)
            .andWhere('last_seen_at', '<', before)
            .whereIn('claim_uid', gone)
            .delete(),
        );
    }
  }

  /** Remembers the claim as the most recently seen, forgetting the least recently seen past the cap. */
  private remember(key: string, value: Remembered) {
    this.remembered.delete(key);
    this.remembered.set(key, value);
    while (this.remembered.size > this.maxRemembered)
      this.remembered.delete(this.remembered.keys().next().value!);
  }
}
