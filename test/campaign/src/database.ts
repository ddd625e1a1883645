import { connect } from 'node:net';
import { knex } from 'knex';

/**
 * The PostgreSQL server of the job store tests: the one a
 * BACKSTAGE_TEST_DATABASE_POSTGRES<N>_CONNECTION_STRING names (`npm run
 * campaign` starts one and sets it), else test/postgres/start-postgres.sh's default.
 */
export const DEFAULT_POSTGRES_URL =
  Object.entries(process.env).find(([key]) =>
    /^BACKSTAGE_TEST_DATABASE_POSTGRES\d+_CONNECTION_STRING$/.test(key),
  )?.[1] ?? 'postgresql://postgres:postgres@127.0.0.1:55432';

/** No PostgreSQL answers: said in one line, with what to run. */
export class NoPostgresError extends Error {}

/** Fails in one line when nothing listens at the server's address (before knex logs its pool errors). */
async function requireListening(serverUrl: string) {
  const { hostname, port } = new URL(serverUrl);
  const listening = await new Promise<boolean>(resolve => {
    const socket = connect(Number(port || 5432), hostname);
    const answer = (value: boolean) => {
      socket.destroy();
      resolve(value);
    };
    socket
      .once('connect', () => answer(true))
      .once('error', () => answer(false));
    socket.setTimeout(5000, () => answer(false));
  });
  if (!listening)
    throw new NoPostgresError(
      `no PostgreSQL answers at ${hostname}:${
        port || 5432
      }: run \`npm run campaign\` at the repository root, which starts one (test/postgres/start-postgres.sh)`,
    );
}

/** A database of its own for one campaign run; every replica shares it (one schema per plugin). */
export async function createRunDatabase(
  serverUrl: string,
  name: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  await requireListening(serverUrl);
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
