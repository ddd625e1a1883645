import {
  DatabaseService,
  resolvePackagePath,
} from '@backstage/backend-plugin-api';
import { Knex } from 'knex';
import { storeClock } from './timestamps';

const migrationsDir = resolvePackagePath(
  'backstage-plugin-pvc-pruner-backend',
  'migrations',
);

/**
 * The plugin's database client, with its schema brought up to date unless
 * the database service says migrations are skipped. Safe to call more than
 * once: knex applies each migration once, under its own lock.
 */
export async function migratedClient(database: DatabaseService): Promise<Knex> {
  const client = await database.getClient();
  if (!database.migrations?.skip) {
    await client.migrate.latest({ directory: migrationsDir });
  }
  return client;
}

/** What a store is made from. */
export interface StoreOptions {
  database: DatabaseService;
  /** Clock for the timestamps the store sets itself, instead of the database's; for tests. */
  now?: () => Date;
}

/**
 * A store's migrated client and its clock: the database's, which every
 * replica shares, so that no replica's skew dates a row.
 */
export async function openStoreDatabase(options: StoreOptions) {
  const db = await migratedClient(options.database);
  return { db, now: storeClock(db, options.now) };
}
