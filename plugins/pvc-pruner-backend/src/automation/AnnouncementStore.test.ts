import { DatabaseService } from '@backstage/backend-plugin-api';
import { TestDatabaseId } from '@backstage/backend-test-utils';
import { Knex } from 'knex';
import { storeTestDatabases } from '../__testUtils__/testDatabases';
import { announcementKey, AnnouncementStore } from './AnnouncementStore';

const databases = storeTestDatabases();

const T0 = new Date('2026-12-01T08:00:00.000Z');
const HOUR = 3600_000;
const hours = (n: number) => new Date(T0.getTime() + n * HOUR);

function databaseService(knex: Knex): DatabaseService {
  return { getClient: async () => knex, migrations: { skip: false } };
}

const demo = (...uids: string[]) => uids.map(uid => ({ cluster: 'demo', uid }));

describe.each(databases.eachSupportedId())(
  'AnnouncementStore on %s',
  (databaseId: TestDatabaseId) => {
    let clock: Date;
    let store: AnnouncementStore;

    beforeEach(async () => {
      const knex = await databases.init(databaseId);
      clock = T0;
      store = await AnnouncementStore.create({
        database: databaseService(knex),
        now: () => clock,
      });
    });

    it('announces a claim the first run plans it, and keeps that first announcement while later runs plan it', async () => {
      const first = await store.announce(demo('a'), []);
      expect(first).toEqual({
        now: T0,
        announcedAt: new Map([
          [announcementKey('demo', 'a'), T0.toISOString()],
        ]),
      });

      clock = hours(1);
      const second = await store.announce(demo('a', 'b'), []);
      expect(second.announcedAt).toEqual(
        new Map([
          [announcementKey('demo', 'a'), T0.toISOString()],
          [announcementKey('demo', 'b'), hours(1).toISOString()],
        ]),
      );
      expect(await store.announcementsOf('demo', ['a', 'b', 'c'])).toEqual({
        now: hours(1),
        announcedAt: new Map([
          ['a', T0.toISOString()],
          ['b', hours(1).toISOString()],
        ]),
      });
      expect(await store.announcementsOf('other', ['a'])).toEqual({
        now: hours(1),
        announcedAt: new Map(),
      });
    });

    it('forgets every announcement when cleared (a backend started with automatic pruning off), so a claim planned later is announced afresh', async () => {
      await store.announce(demo('a'), []);
      await store.clear();
      clock = hours(1);
      expect((await store.announce(demo('a'), [])).announcedAt).toEqual(
        new Map([[announcementKey('demo', 'a'), hours(1).toISOString()]]),
      );
    });

    it('forgets a claim a run does not plan, so planning it again announces it afresh', async () => {
      await store.announce(demo('a', 'b'), []);
      clock = hours(1);
      await store.announce(demo('b'), []);
      expect(
        (await store.announcementsOf('demo', ['a', 'b'])).announcedAt,
      ).toEqual(new Map([['b', T0.toISOString()]]));

      clock = hours(2);
      const again = await store.announce(demo('a', 'b'), []);
      expect(again.announcedAt.get(announcementKey('demo', 'a'))).toBe(
        hours(2).toISOString(),
      );
      expect(again.announcedAt.get(announcementKey('demo', 'b'))).toBe(
        T0.toISOString(),
      );
    });

    it('keeps the announcements of a cluster the run could not read, and forgets those of every other cluster', async () => {
      await store.announce(
        [
          { cluster: 'down', uid: 'a' },
          { cluster: 'removed', uid: 'a' },
        ],
        [],
      );
      clock = hours(1);
      await store.announce([], ['down']);
      expect((await store.announcementsOf('down', ['a'])).announcedAt).toEqual(
        new Map([['a', T0.toISOString()]]),
      );
      expect(
        (await store.announcementsOf('removed', ['a'])).announcedAt,
      ).toEqual(new Map());
    });

    it('records and reads many claims in one run (batched), and deletes those no run planned for a while', async () => {
      const uids = Array.from({ length: 1234 }, (_, i) => `uid-${i}`);
      const run = await store.announce(demo(...uids, ...uids), ['other']);
      expect(run.announcedAt.size).toBe(1234);
      expect((await store.announcementsOf('demo', uids)).announcedAt.size).toBe(
        1234,
      );

      clock = hours(2);
      await store.announce([{ cluster: 'other', uid: 'x' }], ['demo']);
      expect(await store.deleteOlderThan(HOUR)).toBe(1234);
      expect(
        (await store.announcementsOf('other', ['x'])).announcedAt.size,
      ).toBe(1);
    });
  },
);
