import {
  DatabaseService,
  resolvePackagePath,
} from '@backstage/backend-plugin-api';
import { Knex } from 'knex';

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
