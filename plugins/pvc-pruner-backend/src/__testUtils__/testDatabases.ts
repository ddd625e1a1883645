import { TestDatabases } from '@backstage/backend-test-utils';

/**
 * The databases the stores are tested on. SQLite always runs. PostgreSQL
 * runs when a BACKSTAGE_TEST_DATABASE_POSTGRES<major>_CONNECTION_STRING is
 * set, e.g. by
 *   eval "$(bash test/postgres/start-postgres.sh)"
 * Docker is never used (there is none here, and CI=true would otherwise make
 * TestDatabases try it for every Postgres id that has no connection string).
 */
export function storeTestDatabases(): TestDatabases {
  return TestDatabases.create({
    ids: [
      'SQLITE_3',
      'POSTGRES_18',
      'POSTGRES_17',
      'POSTGRES_16',
      'POSTGRES_15',
      'POSTGRES_14',
      'POSTGRES_13',
    ],
    disableDocker: true,
  });
}
