import { DatabaseService } from '@backstage/backend-plugin-api';
import { TestDatabaseId } from '@backstage/backend-test-utils';
import knexFactory, { Knex } from 'knex';
import { storeTestDatabases } from '../__testUtils__/testDatabases';
import { withWallClockSkew } from '../__testUtils__/wallClock';
import { OrphanSighting, OrphanSightingStore } from './OrphanSightingStore';

const databases = storeTestDatabases();

const NOV_3 = new Date('2026-11-03T08:00:00.000Z');
const DEC_1 = new Date('2026-12-01T08:00:00.000Z');

function databaseService(knex: Knex): DatabaseService {
  return { getClient: async () => knex, migrations: { skip: false } };
}

const sighting = (uid: string): OrphanSighting => ({
  uid,
  cluster: 'demo',
  namespace: 'shop',
  name: `data-orders-db-${uid}`,
});

describe.each(databases.eachSupportedId())(
  'OrphanSightingStore on %s',
  (databaseId: TestDatabaseId) => {
    let knex: Knex;

    beforeEach(async () => {
      knex = await databases.init(databaseId);
    });

    it("dates a sighting by the database's clock, which every replica shares, not by this process's", async () => {
      const realNow = performance.timeOrigin + performance.now();
      // Only Date is moved: this process's clock says 2001.
      await withWallClockSkew(
        Date.parse('2001-01-01T00:00:00.000Z') - Date.now(),
        async () => {
          const store = await OrphanSightingStore.create({
            database: databaseService(knex),
          });
          const seen = (await store.record([sighting('a')])).get('a')!;
          expect(Math.abs(Date.parse(seen) - realNow)).toBeLessThan(60_000);
        },
      );
    });

    it('keeps the first sighting of each claim, however often it is seen again', async () => {
      let clock = NOV_3;
      const store = await OrphanSightingStore.create({
        database: databaseService(knex),
        now: () => clock,
      });
      expect(await store.record([sighting('a')])).toEqual(
        new Map([['a', NOV_3.toISOString()]]),
      );
      clock = DEC_1;
      expect(
        await store.record([sighting('a'), sighting('b'), sighting('b')]),
      ).toEqual(
        new Map([
          ['a', NOV_3.toISOString()],
          ['b', DEC_1.toISOString()],
        ]),
      );
      const rows = await knex('pvc_pruner_orphan_sightings')
        .select('uid', 'cluster', 'namespace', 'name')
        .orderBy('uid');
      expect(rows).toEqual([
        {
          uid: 'a',
          cluster: 'demo',
          namespace: 'shop',
          name: 'data-orders-db-a',
        },
        {
          uid: 'b',
          cluster: 'demo',
          namespace: 'shop',
          name: 'data-orders-db-b',
        },
      ]);
    });

    it('answers another replica’s earlier sighting, and writes nothing for claims it already knows', async () => {
      const earlier = await OrphanSightingStore.create({
        database: databaseService(knex),
        now: () => NOV_3,
      });
      await earlier.record([sighting('a')]);
      const later = await OrphanSightingStore.create({
        database: databaseService(knex),
        now: () => DEC_1,
      });
      expect(await later.record([sighting('a')])).toEqual(
        new Map([['a', NOV_3.toISOString()]]),
      );

      const statements: string[] = [];
      knex.on('query', q => statements.push(q.sql));
      await later.record([sighting('a')]);
      knex.removeAllListeners('query');
      expect(statements).toEqual([]);
    });

    it('records thousands of claims in a few batched statements', async () => {
      const store = await OrphanSightingStore.create({
        database: databaseService(knex),
        now: () => NOV_3,
      });
      const many = Array.from({ length: 1200 }, (_, i) => sighting(`u${i}`));
      const statements: string[] = [];
      knex.on('query', q => statements.push(q.sql));
      const firstSeen = await store.record(many);
      knex.removeAllListeners('query');
      expect(firstSeen.size).toBe(1200);
      // Three chunks of at most 500: one insert and one select each.
      expect(statements).toHaveLength(6);
    });

    it('shares the database with a second connection pool, as replicas do', async () => {
      const { client, connection } = knex.client.config;
      if (client !== 'pg') return; // SQLite :memory: is per connection
      const other = knexFactory({
        client,
        connection,
        pool: { min: 0, max: 2 },
      });
      try {
        const a = await OrphanSightingStore.create({
          database: databaseService(knex),
          now: () => NOV_3,
        });
        const b = await OrphanSightingStore.create({
          database: databaseService(other),
          now: () => DEC_1,
        });
        const [fromA, fromB] = await Promise.all([
          a.record([sighting('x')]),
          b.record([sighting('x')]),
        ]);
        expect(fromA.get('x')).toBe(fromB.get('x'));
      } finally {
        await other.destroy();
      }
    });
  },
);
