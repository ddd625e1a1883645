import { knex } from 'knex';

/** The PostgreSQL server of the job store tests (.ci/run starts it). */
export const DEFAULT_POSTGRES_URL =
  process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING ??
  'postgresql://postgres:postgres@127.0.0.1:55432';

/** A database of its own for one campaign run; every replica shares it (one schema per plugin). */
export async function createRunDatabase(
  serverUrl: string,
  name: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = knex({ client: 'pg', connection: serverUrl });
  try {
    await admin.raw(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.destroy();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = knex({ client: 'pg', connection: serverUrl });
      try {
        await client.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.destroy();
      }
    },
  };
}
