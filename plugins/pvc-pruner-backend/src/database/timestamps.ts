import { Knex } from 'knex';

/** A timestamp column as a database client returns it. */
export type Timestamp = Date | number | string;

/**
 * Reads a timestamp column. PostgreSQL returns a Date; SQLite returns the
 * epoch milliseconds that knex wrote for a Date (or, for values written by
 * hand, text such as `2025-01-01 10:00:00`, which SQLite means as UTC).
 */
export function timestampToIso(value: Timestamp): string {
  let date: Date;
  if (value instanceof Date) {
    date = value;
  } else if (typeof value === 'number') {
    date = new Date(value);
  } else if (/^-?\d+(\.\d+)?$/.test(value)) {
    date = new Date(Number(value));
  } else if (
    /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(value)
  ) {
    date = new Date(`${value.replace(' ', 'T')}Z`);
  } else {
    date = new Date(value);
  }
  if (Number.isNaN(date.getTime())) {
    throw new Error(`Unreadable timestamp in the database: ${String(value)}`);
  }
  return date.toISOString();
}

/**
 * A query for the database server's current time, read back as a Date. Every
 * replica reads the same clock this way, so skew between their own clocks
 * cannot make one judge another's heartbeat or Lease stale too early.
 */
async function databaseTime(db: Knex): Promise<Date> {
  const client = String(db.client.config.client);
  let value: Timestamp;
  if (client === 'pg' || client === 'postgres' || client === 'postgresql') {
    ({ now: value } = (
      await db.raw('select clock_timestamp() as now')
    ).rows[0]);
  } else if (client.includes('sqlite')) {
    // strftime %f has milliseconds; SQLite's 'now' is UTC.
    [{ now: value }] = await db.raw(
      `select strftime('%Y-%m-%dT%H:%M:%fZ', 'now') as now`,
    );
  } else if (client.startsWith('mysql')) {
    [[{ now: value }]] = await db.raw(
      `select date_format(utc_timestamp(3), '%Y-%m-%dT%H:%i:%s.%fZ') as now`,
    );
  } else {
    throw new Error(`pvc-pruner: no clock query for database client ${client}`);
  }
  return new Date(timestampToIso(value));
}

/** The clock a store dates rows by: the database's, or a fixed one for tests. */
export function storeClock(db: Knex, fixed?: () => Date): () => Promise<Date> {
  return fixed ? async () => fixed() : () => databaseTime(db);
}
