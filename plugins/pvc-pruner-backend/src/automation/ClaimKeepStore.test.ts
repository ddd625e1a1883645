import { DatabaseService } from '@backstage/backend-plugin-api';
import { TestDatabaseId } from '@backstage/backend-test-utils';
import { ConflictError, InputError } from '@backstage/errors';
import { Knex } from 'knex';
import { storeTestDatabases } from '../__testUtils__/testDatabases';
import { withWallClockSkew } from '../__testUtils__/wallClock';
import { ClaimKeepStore, NewClaimKeep } from './ClaimKeepStore';

const databases = storeTestDatabases();

const DEC_1 = new Date('2026-12-01T08:00:00.000Z');
const DAY = 24 * 60 * 60_000;
const days = (n: number) => new Date(DEC_1.getTime() + n * DAY);

function databaseService(knex: Knex): DatabaseService {
  return { getClient: async () => knex, migrations: { skip: false } };
}

const keepOf = (uid: string, extra: Partial<NewClaimKeep> = {}) => ({
  cluster: 'demo',
  namespace: 'shop',
  claimName: `data-orders-db-${uid}`,
  claimUid: uid,
  entityRef: 'component:default/orders',
  reason: 'holds the November export',
  keptBy: 'user:default/alice',
  ...extra,
});

describe.each(databases.eachSupportedId())(
  'ClaimKeepStore on %s',
  (databaseId: TestDatabaseId) => {
    let knex: Knex;
    let clock: Date;
    let store: ClaimKeepStore;

    beforeEach(async () => {
      knex = await databases.init(databaseId);
      clock = DEC_1;
      store = await ClaimKeepStore.create({
        database: databaseService(knex),
        now: () => clock,
      });
    });

    it('keeps a claim with who, when, why and until when, and answers it by uid in its cluster only', async () => {
      const kept = await store.keep(
        keepOf('a', { until: days(10).toISOString(), reason: '  export  ' }),
      );
      const expected = {
        source: 'card',
        reason: 'export',
        until: days(10).toISOString(),
        keptBy: 'user:default/alice',
        keptAt: DEC_1.toISOString(),
      };
      expect(kept).toEqual(expected);
      expect(await store.keepsOf('demo', ['a', 'b'])).toEqual(
        new Map([['a', expected]]),
      );
      expect(await store.keepsOf('other', ['a'])).toEqual(new Map());
      expect(await store.keptNow('demo', 'a')).toEqual(expected);
    });

    it("replaces the entity's earlier keep of the claim, and forgets it when unkept through the entity", async () => {
      await store.keep(keepOf('a'));
      clock = days(1);
      await store.keep(
        keepOf('a', { reason: 'second', keptBy: 'user:default/bob' }),
      );
      expect(await store.keptNow('demo', 'a')).toEqual({
        source: 'card',
        reason: 'second',
        keptBy: 'user:default/bob',
        keptAt: days(1).toISOString(),
      });
      expect(await store.unkeep('demo', 'a', 'component:default/orders')).toBe(
        true,
      );
      expect(await store.unkeep('demo', 'a', 'component:default/orders')).toBe(
        false,
      );
      expect(await store.keptNow('demo', 'a')).toBeUndefined();
    });

    it("no longer keeps a claim once its keep's end has passed, by the database's clock", async () => {
      await store.keep(keepOf('a', { until: days(2).toISOString() }));
      clock = days(2);
      expect(await store.keptNow('demo', 'a')).toBeUndefined();
      expect(await store.keepsOf('demo', ['a'])).toEqual(new Map());

      const live = await ClaimKeepStore.create({
        database: databaseService(knex),
      });
      await live.keep(
        keepOf('b', { until: new Date(Date.now() + DAY).toISOString() }),
      );
      // This process's clock says two days on: the database's does not.
      await withWallClockSkew(2 * DAY, async () => {
        expect(await live.keptNow('demo', 'b')).toBeDefined();
      });
    });

    it('fence, keep first: the job reads the keep right after marking the claim', async () => {
      await store.keep(keepOf('a'));
      await store.markDeleting('demo', 'a', 'job-1');
      expect(await store.keptNow('demo', 'a')).toMatchObject({
        source: 'card',
      });
    });

    it('fence, mark first: the keep is refused with a 409 and not stored', async () => {
      await store.keep(keepOf('a'));
      await store.markDeleting('demo', 'a', 'job-1');
      await store.markDeleting('demo', 'b', 'job-1');
      const refused = store.keep(keepOf('b'));
      await expect(refused).rejects.toThrow(ConflictError);
      await expect(refused).rejects.toThrow(
        'An automatic prune is deleting data-orders-db-b right now',
      );
      expect(await store.keptNow('demo', 'b')).toBeUndefined();
      // Once the job lifts its mark, the claim can be kept again.
      await store.unmarkDeleting('demo', 'b', 'job-1');
      await expect(store.keep(keepOf('b'))).resolves.toMatchObject({
        source: 'card',
      });
    });

    it("keeps the claim while any entity's keep is in force, answering the one that lasts longest; an entity replaces and removes only its own", async () => {
      const THEIRS = 'component:default/attacker';
      await store.keep(keepOf('a', { reason: 'ours, for good' }));
      await store.keep(
        keepOf('a', {
          entityRef: THEIRS,
          reason: 'theirs',
          keptBy: 'user:default/mallory',
          until: days(1).toISOString(),
        }),
      );
      const ours = { source: 'card', reason: 'ours, for good' };
      expect(await store.keptNow('demo', 'a')).toMatchObject(ours);
      expect((await store.keepsOf('demo', ['a'])).get('a')).toMatchObject(ours);
      expect(await store.unkeep('demo', 'a', THEIRS)).toBe(true);
      expect(await store.unkeep('demo', 'a', THEIRS)).toBe(false);
      expect(await store.keptNow('demo', 'a')).toMatchObject(ours);

      // Of two keeps with an end, the later end is answered.
      await store.keep(keepOf('b', { until: days(3).toISOString() }));
      await store.keep(
        keepOf('b', { entityRef: THEIRS, until: days(5).toISOString() }),
      );
      expect(await store.keptNow('demo', 'b')).toMatchObject({
        until: days(5).toISOString(),
      });
      clock = days(4);
      await store.unkeep('demo', 'b', 'component:default/orders');
      expect(await store.keptNow('demo', 'b')).toMatchObject({
        until: days(5).toISOString(),
      });
    });

    it("a keep refused for a mark puts the entity's earlier keep back, acknowledged as it was", async () => {
      await store.keep(
        keepOf('a', { reason: 'alice', until: days(30).toISOString() }),
      );
      await store.markDeleting('demo', 'a', 'job-1');
      await expect(
        store.keep(keepOf('a', { reason: 'bob', keptBy: 'user:default/bob' })),
      ).rejects.toThrow(ConflictError);
      expect(await store.keptNow('demo', 'a')).toEqual({
        source: 'card',
        reason: 'alice',
        until: days(30).toISOString(),
        keptBy: 'user:default/alice',
        keptAt: DEC_1.toISOString(),
      });
    });

    it('ignores the deleting mark of a job that has ended, once a Lease has passed since the mark (a crashed job no longer refuses keeps)', async () => {
      const job = (id: string, status: string) => ({
        id,
        entity_ref: 'component:default/orders',
        cluster: 'demo',
        namespace: 'shop',
        stateful_set: 'orders-db',
        dry_run: false,
        status,
        requested_by: 'user:default/alice',
        pvcs: '[]',
        created_at: DEC_1,
        summary: '{}',
      });
      await knex('pvc_pruner_jobs').insert([
        job('ended', 'interrupted'),
        job('live', 'running'),
      ]);
      await store.markDeleting('demo', 'a', 'ended');
      await expect(store.keep(keepOf('a'))).resolves.toMatchObject({
        source: 'card',
      });
      await store.markDeleting('demo', 'b', 'live');
      await expect(store.keep(keepOf('b'))).rejects.toThrow(ConflictError);

      // Within a Lease of its mark, an ended job may only have been taken for dead: its delete may still come.
      const trusting = await ClaimKeepStore.create({
        database: databaseService(knex),
        now: () => clock,
        markTrustMs: 30_000,
      });
      await trusting.markDeleting('demo', 'c', 'ended');
      clock = new Date(DEC_1.getTime() + 10_000);
      await expect(trusting.keep(keepOf('c'))).rejects.toThrow(ConflictError);
      clock = new Date(DEC_1.getTime() + 31_000);
      await expect(trusting.keep(keepOf('c'))).resolves.toMatchObject({
        source: 'card',
      });
    });

    it("refuses an end that has passed or is more than a year ahead, by the database's clock", async () => {
      await expect(
        store.keep(keepOf('a', { until: DEC_1.toISOString() })),
      ).rejects.toThrow("A keep's end must be in the future");
      await expect(
        store.keep(keepOf('a', { until: days(367).toISOString() })),
      ).rejects.toThrow("A keep's end must be at most a year ahead");
      await expect(
        store.keep(keepOf('a', { until: 'next week' })),
      ).rejects.toThrow(InputError);
      await expect(
        store.keep(keepOf('a', { until: days(365).toISOString() })),
      ).resolves.toMatchObject({ until: days(365).toISOString() });
      expect(await store.keptNow('demo', 'a')).toBeDefined();
    });

    it('unkeeps through an entity only a keep made through it', async () => {
      await store.keep(keepOf('a'));
      expect(await store.unkeep('demo', 'a', 'component:default/other')).toBe(
        false,
      );
      expect(await store.unkeep('demo', 'a', 'component:default/orders')).toBe(
        true,
      );
    });

    it('refuses an empty or over-long reason, and an over-long ref', async () => {
      await expect(store.keep(keepOf('a', { reason: '   ' }))).rejects.toThrow(
        InputError,
      );
      await expect(
        store.keep(keepOf('a', { reason: 'x'.repeat(501) })),
      ).rejects.toThrow('A keep reason must be 1 to 500 characters long');
      await expect(
        store.keep(keepOf('a', { keptBy: `user:default/${'x'.repeat(1100)}` })),
      ).rejects.toThrow(InputError);
      await expect(
        store.keep(keepOf('a', { reason: 'x'.repeat(500) })),
      ).resolves.toMatchObject({ reason: 'x'.repeat(500) });
    });

    it('reads the keeps of thousands of claims in a few statements', async () => {
      await store.keep(keepOf('u7'));
      const statements: string[] = [];
      knex.on('query', q => statements.push(q.sql));
      const keeps = await store.keepsOf(
        'demo',
        Array.from({ length: 1200 }, (_, i) => `u${i}`),
      );
      knex.removeAllListeners('query');
      expect([...keeps.keys()]).toEqual(['u7']);
      expect(statements.length).toBeLessThanOrEqual(3);
    });

    it('deletes keeps that ended and marks older than the retention, and keeps the rest', async () => {
      await store.keep(keepOf('ended', { until: days(1).toISOString() }));
      await store.keep(keepOf('open'));
      await store.keep(keepOf('later', { until: days(100).toISOString() }));
      await store.markDeleting('demo', 'old', 'job-1');
      clock = days(50);
      await store.markDeleting('demo', 'new', 'job-2');
      clock = days(95);
      expect(await store.deleteOlderThan(90 * DAY)).toEqual({
        keeps: 1,
        marks: 1,
      });
      const keeps = await knex('pvc_pruner_claim_keeps')
        .select('uid')
        .orderBy('uid');
      expect(keeps.map(r => r.uid)).toEqual(['later', 'open']);
      const marks = await knex('pvc_pruner_claim_deleting').select('uid');
      expect(marks.map(r => r.uid)).toEqual(['new']);
    });
  },
);
