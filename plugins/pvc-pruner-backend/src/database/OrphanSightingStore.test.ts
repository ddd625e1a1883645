import { DatabaseService } from '@backstage/backend-plugin-api';
import { TestDatabaseId } from '@backstage/backend-test-utils';
import knexFactory, { Knex } from 'knex';
import { storeTestDatabases } from '../__testUtils__/testDatabases';
import { withWallClockSkew } from '../__testUtils__/wallClock';
import { OrphanSighting, OrphanSightingStore } from './OrphanSightingStore';
import { timestampToIso } from './timestamps';

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

    describe('what it keeps', () => {
      const DAY = 24 * 60 * 60_000;
      const HOUR = 60 * 60_000;
      const days = (n: number) => new Date(NOV_3.getTime() + n * DAY);
      let clock: Date;
      let monotonic: number;
      let statements: string[];

      const storeOf = (options: { maxRemembered?: number } = {}) =>
        OrphanSightingStore.create({
          database: databaseService(knex),
          now: () => clock,
          monotonicNow: () => monotonic,
          ...options,
        });

      /** The SQL `fn` sends. */
      async function sqlOf(fn: () => Promise<unknown>) {
        statements = [];
        const listener = (q: { sql: string }) => statements.push(q.sql);
        knex.on('query', listener);
        try {
          await fn();
        } finally {
          knex.removeListener('query', listener);
        }
        return statements;
      }

      beforeEach(() => {
        clock = NOV_3;
        monotonic = 0;
      });

      it('deletes the sightings of claims no scan has seen for the retention, and keeps a claim still seen, with its first sighting', async () => {
        const store = await storeOf();
        await store.record([sighting('still'), sighting('gone')]);
        // Seen again 50 days later (more than an hour since this process wrote it).
        clock = days(50);
        monotonic += 2 * HOUR;
        await store.record([sighting('still')]);

        clock = days(100);
        expect(await store.deleteNotSeenFor(90 * DAY)).toBe(1);

        const rows = await knex('pvc_pruner_orphan_sightings').select('uid');
        expect(rows.map(r => r.uid)).toEqual(['still']);
        // Another replica reads the first sighting, not the last.
        const other = await storeOf();
        expect((await other.record([sighting('still')])).get('still')).toBe(
          NOV_3.toISOString(),
        );
      });

      it("ages sightings by the database's clock: a replica whose own clock runs a year fast deletes nothing recent", async () => {
        const live = await OrphanSightingStore.create({
          database: databaseService(knex),
        });
        await live.record([sighting('a')]);

        await withWallClockSkew(365 * DAY, async () => {
          expect(await live.deleteNotSeenFor(90 * DAY)).toBe(0);
        });
      });

      it('counts a sighting written before last sightings were kept as last seen when first seen', async () => {
        await storeOf();
        await knex('pvc_pruner_orphan_sightings').insert([
          { ...sighting('old'), first_seen_at: days(0), last_seen_at: null },
          { ...sighting('new'), first_seen_at: days(95), last_seen_at: null },
        ]);
        clock = days(100);

        expect(await (await storeOf()).deleteNotSeenFor(90 * DAY)).toBe(1);
        const rows = await knex('pvc_pruner_orphan_sightings').select('uid');
        expect(rows.map(r => r.uid)).toEqual(['new']);
      });

      it('writes the last sighting of a claim it keeps seeing at most once an hour', async () => {
        const store = await storeOf();
        await store.record([sighting('a')]);

        monotonic += 30 * 60_000;
        clock = days(1);
        const writes = (sql: string[]) => sql.filter(q => !/^select/.test(q));
        expect(
          writes(await sqlOf(() => store.record([sighting('a')]))),
        ).toEqual([]);

        monotonic += 31 * 60_000;
        expect(
          await sqlOf(async () =>
            expect((await store.record([sighting('a')])).get('a')).toBe(
              NOV_3.toISOString(),
            ),
          ),
        ).toHaveLength(2);
        const [row] = await knex('pvc_pruner_orphan_sightings').select(
          'first_seen_at',
          'last_seen_at',
        );
        expect(timestampToIso(row.first_seen_at)).toBe(NOV_3.toISOString());
        expect(timestampToIso(row.last_seen_at)).toBe(days(1).toISOString());
      });

      it('forgets the sighting of a claim seen in use, so that orphaned again it is first seen anew', async () => {
        const store = await storeOf();
        await store.record([sighting('a'), sighting('b')]);
        expect(
          await store.forgetInUse('demo', [
            { namespace: 'shop', name: 'data-orders-db-a' },
            { namespace: 'shop', name: 'data-orders-db-never-orphaned' },
            { namespace: 'other', name: 'data-orders-db-b' },
          ]),
        ).toBe(1);
        clock = days(3);
        const seen = await store.record([sighting('a'), sighting('b')]);
        expect(seen.get('a')).toBe(days(3).toISOString());
        expect(seen.get('b')).toBe(NOV_3.toISOString());
      });

      it("forgets another replica's sighting at once when told every claim, and a scan's within a few minutes", async () => {
        const here = await storeOf();
        const inUse = [{ namespace: 'shop', name: 'data-orders-db-a' }];
        const scan = { skipRecentlyForgotten: true };
        expect(await here.forgetInUse('demo', inUse, scan)).toBe(0);
        await (await storeOf()).record([sighting('a')]);
        // A scan trusts for a while that what it just forgot has no row.
        expect(await here.forgetInUse('demo', inUse, scan)).toBe(0);
        monotonic += 10 * 60_000;
        expect(await here.forgetInUse('demo', inUse, scan)).toBe(1);
        await (await storeOf()).record([sighting('a')]);
        // The watch caches' sweep sends every claim newly in use: no trust.
        expect(await here.forgetInUse('demo', inUse)).toBe(1);
      });

      it('forgets a claim recorded here since it was forgotten, even within the few minutes', async () => {
        const store = await storeOf();
        const inUse = [{ namespace: 'shop', name: 'data-orders-db-a' }];
        await store.forgetInUse('demo', inUse, { skipRecentlyForgotten: true });
        await store.record([sighting('a')]);
        expect(
          await store.forgetInUse('demo', inUse, {
            skipRecentlyForgotten: true,
          }),
        ).toBe(1);
      });

      it('forgets every row of a name, whatever its uid, past any number of rows this process remembers', async () => {
        const store = await storeOf({ maxRemembered: 2 });
        // Rows this process never saw: written by other replicas, more than it remembers.
        await knex.batchInsert(
          'pvc_pruner_orphan_sightings',
          Array.from({ length: 1200 }, (_, i) => ({
            ...sighting(`other-${i}`),
            first_seen_at: NOV_3,
            last_seen_at: NOV_3,
          })),
          100,
        );
        // An older claim of the same name as a current one.
        await knex('pvc_pruner_orphan_sightings').insert({
          ...sighting('replaced'),
          uid: 'old-uid',
          name: 'data-orders-db-other-1100',
          first_seen_at: NOV_3,
          last_seen_at: NOV_3,
        });
        const inUse = Array.from({ length: 1200 }, (_, i) => ({
          namespace: 'shop',
          name: `data-orders-db-other-${i}`,
        }));
        const sql = await sqlOf(async () =>
          expect(await store.forgetInUse('demo', inUse)).toBe(1201),
        );
        expect(sql).toHaveLength(3);
        const left = await knex('pvc_pruner_orphan_sightings').select('uid');
        expect(left).toEqual([]);
      });

      it('answers a new first sighting, not the one it remembers, once another replica forgot the claim', async () => {
        const here = await storeOf();
        const there = await storeOf();
        await here.record([sighting('a')]);
        await there.forgetInUse('demo', [
          { namespace: 'shop', name: 'data-orders-db-a' },
        ]);
        clock = days(3);
        // Within a few minutes here trusts what it remembers, then reads the row again.
        monotonic += 10 * 60_000;
        expect((await here.record([sighting('a')])).get('a')).toBe(
          days(3).toISOString(),
        );
      });

      it('reads again, without writing, a claim it remembers once a few minutes have passed', async () => {
        const store = await storeOf();
        await store.record([sighting('a')]);
        monotonic += 10 * 60_000;
        const sql = await sqlOf(async () =>
          expect((await store.record([sighting('a')])).get('a')).toBe(
            NOV_3.toISOString(),
          ),
        );
        expect(sql).toHaveLength(1);
        expect(sql[0]).toMatch(/^select/);
      });

      it('a scan writes for claims in use once, then nothing for a few minutes', async () => {
        const store = await storeOf();
        await store.record([sighting('a')]);
        const inUse = Array.from({ length: 1000 }, (_, i) => ({
          namespace: 'shop',
          name: `data-orders-db-${i}`,
        }));
        const scan = { skipRecentlyForgotten: true };
        const first = await sqlOf(() => store.forgetInUse('demo', inUse, scan));
        expect(first).toHaveLength(2);
        expect(first[0]).toMatch(/^delete/);
        expect(
          await sqlOf(() => store.forgetInUse('demo', inUse, scan)),
        ).toEqual([]);
      });

      it('remembers at most maxRemembered claims, forgetting the one seen longest ago, and reads a forgotten one back', async () => {
        const store = await storeOf({ maxRemembered: 2 });
        await store.record([sighting('a'), sighting('b'), sighting('c')]);
        clock = days(1);

        // a was forgotten; b and c are remembered.
        expect(await sqlOf(() => store.record([sighting('c')]))).toEqual([]);
        expect(await sqlOf(() => store.record([sighting('b')]))).toEqual([]);
        let firstSeen: Map<string, string> | undefined;
        expect(
          await sqlOf(async () => {
            firstSeen = await store.record([sighting('a')]);
          }),
        ).not.toEqual([]);
        expect(firstSeen!.get('a')).toBe(NOV_3.toISOString());
        // c, seen longest ago, made room for a; b, seen since, stays.
        expect(await sqlOf(() => store.record([sighting('b')]))).toEqual([]);
        expect(await sqlOf(() => store.record([sighting('c')]))).not.toEqual(
          [],
        );
      });
    });
  },
);
