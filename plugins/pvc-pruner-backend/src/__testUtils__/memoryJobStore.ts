import { DatabaseService } from '@backstage/backend-plugin-api';
import knexFactory from 'knex';
import { PruneJobStore } from '../database';

/** An in-memory SQLite database as the database service hands it to a store (migrated on create), and how to close it. */
export function memoryDatabase(): {
  database: DatabaseService;
  close: () => Promise<void>;
} {
  const knex = knexFactory({
    client: 'better-sqlite3',
    connection: ':memory:',
    useNullAsDefault: true,
  });
  return {
    database: {
      getClient: async () => knex,
      migrations: { skip: false },
    } as DatabaseService,
    close: () => knex.destroy(),
  };
}

/** A real job store on an in-memory SQLite database (migrated), and how to close it. */
export async function startMemoryJobStore(): Promise<{
  store: PruneJobStore;
  close: () => Promise<void>;
}> {
  const { database, close } = memoryDatabase();
  const store = await PruneJobStore.create({ database });
  return { store, close };
}

/** A new prune job of StatefulSet shop/web unless told (entity web, cluster demo), asked by alice. */
export function createWebJob(
  store: PruneJobStore,
  pvcs: Array<{ name: string; uid: string }>,
  overrides: {
    requestedBy?: string;
    statefulSet?: string;
    dryRun?: boolean;
  } = {},
) {
  return store.createJob({
    entityRef: 'component:default/web',
    cluster: 'demo',
    namespace: 'shop',
    statefulSet: 'web',
    dryRun: false,
    requestedBy: 'user:default/alice',
    pvcs,
    ...overrides,
  });
}
