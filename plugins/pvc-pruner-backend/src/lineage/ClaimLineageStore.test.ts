import { DatabaseService } from '@backstage/backend-plugin-api';
import { TestDatabaseId } from '@backstage/backend-test-utils';
import { Knex } from 'knex';
import { storeTestDatabases } from '../__testUtils__/testDatabases';
import { withWallClockSkew } from '../__testUtils__/wallClock';
import {
  ClaimLineageRecord,
  ClaimLineageStore,
  MAX_STORED_CLAIMANTS,
} from './ClaimLineageStore';

const databases = storeTestDatabases();

const NOV_3 = new Date('2026-11-03T08:00:00.000Z');
const DAY = 24 * 60 * 60_000;
const HOUR = 60 * 60_000;
const days = (n: number) => new Date(NOV_3.getTime() + n * DAY);

function databaseService(knex: Knex): DatabaseService {
  return { getClient: async () => knex, migrations: { skip: false } };
}

/** Claim `uid`, ordinal `ordinal` of template data of StatefulSet orders-db (uid sts-1), claimed by orders. */
const lineage = (
  uid: string,
  overrides: Partial<ClaimLineageRecord> = {},
): ClaimLineageRecord => ({
  cluster: 'demo',
  namespace: 'shop',
  claimUid: uid,
  statefulSet: { name: 'orders-db', uid: 'sts-1' },
  template: 'data',
  ordinal: 0,
  claimants: ['component:default/orders'],
  claimantUids: { 'component:default/orders': 'uid-orders' },
  ...overrides,
});

describe.each(databases.eachSupportedId())(
  'ClaimLineageStore on %s',
  (databaseId: TestDatabaseId) => {
    let knex: Knex;
    let clock: Date;
    let monotonic: number;

    beforeEach(async () => {
      knex = await databases.init(databaseId);
      clock = NOV_3;
      monotonic = 0;
    });

    const storeOf = (options: { maxRemembered?: number } = {}) =>
      ClaimLineageStore.create({
        database: databaseService(knex),
        now: () => clock,
        monotonicNow: () => monotonic,
        ...options,
      });

    it('finds the claims an entity is a recorded claimant of, exactly, and the namespaces with lineage', async () => {
      const store = await storeOf();
      await store.record([
        lineage('a'),
        lineage('b', {
          namespace: 'billing',
          claimants: ['component:default/orders_2', 'component:default/x%'],
        }),
        lineage('c', { cluster: 'other' }),
      ]);
      const found = await store.lineageClaimedBy(
        'demo',
        'component:default/orders',
        10,
      );
      expect(found.map(l => l.claimUid)).toEqual(['a']);
      // LIKE's wildcards in a ref are matched literally.
      expect(
        await store.lineageClaimedBy('demo', 'component:default/orders_', 10),
      ).toEqual([]);
      expect(
        (await store.lineageClaimedBy('demo', 'component:default/x%', 10)).map(
          l => l.claimUid,
        ),
      ).toEqual(['b']);
      expect(await store.namespacesWithLineage('demo', 10)).toEqual([
        'billing',
        'shop',
      ]);
      expect(await store.namespacesWithLineage('demo', 1)).toEqual(['billing']);
    });

    it('lists the namespaces with lineage most recently seen first, and only the one asked for, whatever its place', async () => {
      const store = await storeOf();
      await store.record([lineage('old', { namespace: 'archive' })]);
      clock = days(1);
      await store.record([
        lineage('new', { namespace: 'zoo' }),
        lineage('new2', { namespace: 'shop' }),
      ]);
      expect(await store.namespacesWithLineage('demo', 2)).toEqual([
        'shop',
        'zoo',
      ]);
      expect(await store.namespacesWithLineage('demo', 1, 'archive')).toEqual([
        'archive',
      ]);
      expect(await store.namespacesWithLineage('demo', 1, 'nowhere')).toEqual(
        [],
      );
    });

    /** The SQL `fn` sends. */
    async function sqlOf(fn: () => Promise<unknown>) {
      const statements: string[] = [];
      const listener = (q: { sql: string }) => statements.push(q.sql);
      knex.on('query', listener);
      try {
        await fn();
      } finally {
        knex.removeListener('query', listener);
      }
      return statements;
    }

    it('keeps what each claim belonged to, and answers it by claim uid and by StatefulSet name', async () => {
      const store = await storeOf();
      await store.record([
        lineage('a'),
        lineage('b', { ordinal: 1 }),
        lineage('c', { template: 'logs', ordinal: 0 }),
        lineage('other', { statefulSet: { name: 'web', uid: 'sts-2' } }),
      ]);

      const byUid = await store.lineageOf('demo', ['b', 'nope', 'b']);
      expect([...byUid.keys()]).toEqual(['b']);
      expect(byUid.get('b')).toEqual({
        cluster: 'demo',
        namespace: 'shop',
        claimUid: 'b',
        claimName: 'data-orders-db-1',
        statefulSet: { name: 'orders-db', uid: 'sts-1' },
        template: 'data',
        ordinal: 1,
        claimants: ['component:default/orders'],
        claimantUids: { 'component:default/orders': 'uid-orders' },
        claimantsCrowded: false,
        lastSeenAt: NOV_3.toISOString(),
      });
      expect(
        (await store.lineageByStatefulSetName('demo', 'shop', 'orders-db')).map(
          l => l.claimName,
        ),
      ).toEqual(['data-orders-db-0', 'data-orders-db-1', 'logs-orders-db-0']);
      expect(
        await store.lineageByStatefulSetName('demo', 'other', 'web'),
      ).toEqual([]);
    });

    it('reads a row written before claimant uids were kept with none, so its claimants count as unverifiable', async () => {
      const store = await storeOf();
      await store.record([lineage('old')]);
      await knex('pvc_pruner_claim_lineage').update({ claimant_uids: null });
      const read = (await store.lineageOf('demo', ['old'])).get('old')!;
      expect(read.claimants).toEqual(['component:default/orders']);
      expect(read.claimantUids).toEqual({});
    });

    it('keeps one lineage per claim uid in each cluster: the latest StatefulSet wins, and another cluster never overwrites it', async () => {
      const store = await storeOf();
      await store.record([lineage('a')]);
      // The StatefulSet was re-created under the same name: a new uid.
      await store.record([
        lineage('a', { statefulSet: { name: 'orders-db', uid: 'sts-9' } }),
        lineage('a', { cluster: 'other', claimants: [] }),
      ]);

      expect(
        (await store.lineageOf('demo', ['a'])).get('a')?.statefulSet,
      ).toEqual({ name: 'orders-db', uid: 'sts-9' });
      expect(
        (await store.lineageOf('other', ['a'])).get('a')?.claimants,
      ).toEqual([]);
      const [{ n }] = await knex('pvc_pruner_claim_lineage').count({ n: '*' });
      expect(Number(n)).toBe(2);
    });

    it("dates lineage by the database's clock, which every replica shares, not by this process's", async () => {
      const realNow = performance.timeOrigin + performance.now();
      // Only Date is moved: this process's clock says 2001.
      await withWallClockSkew(
        Date.parse('2001-01-01T00:00:00.000Z') - Date.now(),
        async () => {
          const store = await ClaimLineageStore.create({
            database: databaseService(knex),
          });
          await store.record([lineage('a')]);
          const seen = (await store.lineageOf('demo', ['a'])).get('a')!;
          expect(Math.abs(Date.parse(seen.lastSeenAt) - realNow)).toBeLessThan(
            60_000,
          );
        },
      );
    });

    it('writes the lineage of a claim it keeps seeing unchanged at most once an hour', async () => {
      const store = await storeOf();
      await store.record([lineage('a')]);

      monotonic += 30 * 60_000;
      clock = days(1);
      expect(await sqlOf(() => store.record([lineage('a')]))).toEqual([]);

      monotonic += 31 * 60_000;
      expect(await sqlOf(() => store.record([lineage('a')]))).toHaveLength(1);
      expect((await store.lineageOf('demo', ['a'])).get('a')?.lastSeenAt).toBe(
        days(1).toISOString(),
      );
    });

    it('writes at once when the StatefulSet uid or the claimants change', async () => {
      const store = await storeOf();
      await store.record([lineage('a')]);

      monotonic += 60_000;
      const recreated = lineage('a', {
        statefulSet: { name: 'orders-db', uid: 'sts-2' },
      });
      expect(await sqlOf(() => store.record([recreated]))).toHaveLength(1);
      const shared = {
        ...recreated,
        claimants: ['component:default/orders', 'component:default/billing'],
      };
      monotonic += 60_000;
      expect(await sqlOf(() => store.record([shared]))).toHaveLength(1);
      // The same claimants in another order are not a change.
      monotonic += 60_000;
      expect(
        await sqlOf(() =>
          store.record([
            { ...shared, claimants: [...shared.claimants].reverse() },
          ]),
        ),
      ).toEqual([]);

      const kept = (await store.lineageOf('demo', ['a'])).get('a')!;
      expect(kept.statefulSet.uid).toBe('sts-2');
      expect(kept.claimants).toEqual([
        'component:default/billing',
        'component:default/orders',
      ]);
    });

    it(`keeps at most ${MAX_STORED_CLAIMANTS} claimants per claim, and says when it kept fewer than there were`, async () => {
      const store = await storeOf();
      const many = Array.from(
        { length: 25 },
        (_, i) => `component:default/c${String(i).padStart(2, '0')}`,
      );
      await store.record([
        lineage('crowded', { claimants: many }),
        lineage('long', {
          claimants: [
            'component:default/ok',
            `component:default/${'x'.repeat(300)}`,
          ],
        }),
        lineage('few', { claimants: many.slice(0, MAX_STORED_CLAIMANTS) }),
      ]);

      const kept = await store.lineageOf('demo', ['crowded', 'long', 'few']);
      expect(kept.get('crowded')?.claimants).toEqual(
        many.slice(0, MAX_STORED_CLAIMANTS),
      );
      expect(kept.get('crowded')?.claimantsCrowded).toBe(true);
      expect(kept.get('long')?.claimants).toEqual(['component:default/ok']);
      expect(kept.get('long')?.claimantsCrowded).toBe(true);
      expect(kept.get('few')?.claimants).toHaveLength(MAX_STORED_CLAIMANTS);
      expect(kept.get('few')?.claimantsCrowded).toBe(false);
    });

    it('records nothing it would have to cut: names past the column, or ordinals past its integer', async () => {
      const store = await storeOf();
      await store.record([
        lineage('long-name', {
          statefulSet: { name: 'x'.repeat(256), uid: 'sts-1' },
        }),
        lineage('long-template', { template: 't'.repeat(256) }),
        lineage('big-ordinal', { ordinal: 2 ** 31 }),
        lineage('u'.repeat(65)),
        lineage('fine', { ordinal: 2 ** 31 - 1 }),
      ]);

      const rows = await knex('pvc_pruner_claim_lineage').select('claim_uid');
      expect(rows.map(r => r.claim_uid)).toEqual(['fine']);
    });

    it('deletes the lineage of claims no scan has seen for the retention, and keeps a claim still seen', async () => {
      const store = await storeOf();
      await store.record([lineage('still'), lineage('gone')]);
      // Seen again 50 days later (more than an hour since this process wrote it).
      clock = days(50);
      monotonic += 2 * HOUR;
      await store.record([lineage('still')]);

      clock = days(100);
      expect(await store.deleteNotSeenFor(90 * DAY)).toBe(1);

      expect([
        ...(await store.lineageOf('demo', ['still', 'gone'])).keys(),
      ]).toEqual(['still']);
    });

    it('keeps old lineage a cluster still references (a claim that exists, a claimRef a Released volume names), and all of a cluster it cannot answer for', async () => {
      const store = await storeOf();
      const many = Array.from({ length: 1200 }, (_, i) => `u-${i}`);
      await store.record([
        ...many.map(uid => lineage(uid)),
        lineage('still-claimed'),
        lineage('named-by-a-released-volume'),
        lineage('unready', { cluster: 'unready' }),
        lineage('unconfigured', { cluster: 'unconfigured' }),
      ]);
      clock = days(100);
      const referenced = new Map<string, ReadonlySet<string>>([
        ['demo', new Set(['still-claimed', 'named-by-a-released-volume'])],
        ['unconfigured', new Set()],
      ]);

      expect(
        await store.deleteNotSeenFor(90 * DAY, cluster =>
          referenced.get(cluster),
        ),
      ).toBe(many.length + 1);

      expect(
        (await knex('pvc_pruner_claim_lineage').select('claim_uid'))
          .map(r => r.claim_uid)
          .sort(),
      ).toEqual(['named-by-a-released-volume', 'still-claimed', 'unready']);
      // What a scan last saw is still the StatefulSet's last sighting: the card's "last seen".
      expect(
        (await store.lineageOf('demo', ['still-claimed'])).get('still-claimed')
          ?.lastSeenAt,
      ).toBe(NOV_3.toISOString());
    });

    it("ages lineage by the database's clock: a replica whose own clock runs a year fast deletes nothing recent", async () => {
      const live = await ClaimLineageStore.create({
        database: databaseService(knex),
      });
      await live.record([lineage('a')]);

      await withWallClockSkew(365 * DAY, async () => {
        expect(await live.deleteNotSeenFor(90 * DAY)).toBe(0);
      });
      expect((await live.lineageOf('demo', ['a'])).size).toBe(1);
    });

    it('records thousands of claims in a few batched statements', async () => {
      const store = await storeOf();
      const many = Array.from({ length: 700 }, (_, i) =>
        lineage(`u${i}`, { ordinal: i }),
      );
      expect(await sqlOf(() => store.record(many))).toHaveLength(3);
      expect(
        (
          await store.lineageOf(
            'demo',
            many.map(l => l.claimUid),
          )
        ).size,
      ).toBe(700);
    });

    it('remembers at most maxRemembered claims, writing a forgotten one again when it is seen', async () => {
      const store = await storeOf({ maxRemembered: 2 });
      await store.record([lineage('a'), lineage('b'), lineage('c')]);

      // a was forgotten; b and c are remembered.
      expect(await sqlOf(() => store.record([lineage('c')]))).toEqual([]);
      expect(await sqlOf(() => store.record([lineage('b')]))).toEqual([]);
      expect(await sqlOf(() => store.record([lineage('a')]))).toHaveLength(1);
      // c, seen longest ago, made room for a; b, seen since, stays.
      expect(await sqlOf(() => store.record([lineage('b')]))).toEqual([]);
      expect(await sqlOf(() => store.record([lineage('c')]))).toHaveLength(1);
    });
  },
);
