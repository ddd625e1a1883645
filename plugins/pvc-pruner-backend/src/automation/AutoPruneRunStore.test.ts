import {
  DatabaseService,
  SchedulerServiceTaskScheduleDefinition,
} from '@backstage/backend-plugin-api';
import { TestDatabaseId } from '@backstage/backend-test-utils';
import { Knex } from 'knex';
import { storeTestDatabases } from '../__testUtils__/testDatabases';
import {
  AutoPruneRunStore,
  LOST_RUN,
  MAX_STORED_OUTCOMES,
} from './AutoPruneRunStore';

const databases = storeTestDatabases();

const T0 = new Date('2026-12-01T08:00:00.000Z');
const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;

function databaseService(knex: Knex): DatabaseService {
  return { getClient: async () => knex, migrations: { skip: false } };
}

const finished = {
  status: 'finished' as const,
  considered: 7,
  eligible: 4,
  deleted: 3,
  kept: 2,
  bytesDeleted: 3 * 2 ** 30,
  statefulSets: 2,
  dryRunFailures: 1,
};

describe.each(databases.eachSupportedId())(
  'AutoPruneRunStore on %s',
  (databaseId: TestDatabaseId) => {
    let knex: Knex;
    let clock: Date;
    const open = (
      frequency: SchedulerServiceTaskScheduleDefinition['frequency'] = {
        hours: 1,
      },
    ) =>
      AutoPruneRunStore.create({
        database: databaseService(knex),
        now: () => clock,
        schedule: { frequency, timeout: { minutes: 30 } },
      });

    beforeEach(async () => {
      knex = await databases.init(databaseId);
      clock = T0;
    });

    it('answers the last run with its summary, running then finished, and never serves its outcomes', async () => {
      const store = await open();
      expect(await store.lastRun()).toBeUndefined();
      const older = await store.startRun();
      await store.finishRun(older.id, { ...finished, deleted: 1 });
      clock = new Date(T0.getTime() + HOUR);
      const run = await store.startRun();
      expect(await store.lastRun()).toEqual({
        id: run.id,
        startedAt: clock.toISOString(),
        status: 'running',
        considered: 0,
        eligible: 0,
        deleted: 0,
        kept: 0,
        bytesDeleted: 0,
        statefulSets: 0,
        dryRunFailures: 0,
      });
      clock = new Date(T0.getTime() + HOUR + 60_000);
      await store.finishRun(run.id, {
        ...finished,
        status: 'stopped-at-limit',
        stoppedBecause: 'maxClaimsPerRun (3) reached',
        outcomes: [
          {
            cluster: 'demo',
            namespace: 'shop',
            statefulSet: 'orders-db',
            outcome: 'pruned',
            deleted: ['data-orders-db-2'],
          },
        ],
      });
      expect(await store.lastRun()).toEqual({
        id: run.id,
        startedAt: new Date(T0.getTime() + HOUR).toISOString(),
        finishedAt: clock.toISOString(),
        ...finished,
        status: 'stopped-at-limit',
        stoppedBecause: 'maxClaimsPerRun (3) reached',
      });
    });

    it('records as failed, when the next run starts, a run its replica never finished, unless it finishes after all', async () => {
      const store = await open();
      const lost = await store.startRun();
      clock = new Date(T0.getTime() + HOUR);

      const next = await store.startRun();

      expect(await store.getRun(lost.id)).toMatchObject({
        status: 'failed',
        finishedAt: clock.toISOString(),
        stoppedBecause: LOST_RUN,
      });
      expect(await store.getRun(next.id)).toMatchObject({ status: 'running' });
      await store.finishRun(lost.id, finished);
      expect(await store.getRun(lost.id)).toMatchObject({
        status: 'finished',
        deleted: 3,
      });
    });

    it('caps the outcomes it keeps for the audit, whatever the fleet', async () => {
      const store = await open();
      const run = await store.startRun();
      const outcome = {
        cluster: 'demo',
        namespace: 'shop',
        statefulSet: 'orders-db',
        outcome: 'error' as const,
        reason: 'x'.repeat(100_000),
        deleted: Array.from({ length: 500 }, (_, i) => `data-${i}`),
      };
      await store.finishRun(run.id, {
        ...finished,
        outcomes: Array.from({ length: 5000 }, () => outcome),
      });
      const [row] = await knex('pvc_pruner_auto_prune_runs').select('outcomes');
      expect(row.outcomes.length).toBeLessThanOrEqual(64_000);
      const stored = JSON.parse(row.outcomes);
      expect(stored.total).toBe(5000);
      expect(stored.outcomes.length).toBeLessThanOrEqual(MAX_STORED_OUTCOMES);
      expect(stored.outcomes[0].reason.length).toBeLessThanOrEqual(1000);
      expect(stored.outcomes[0].deleted).toHaveLength(50);
    });

    it("answers the next run of a frequency schedule as the last run's start plus the frequency", async () => {
      const store = await open({ hours: 6 });
      expect(await store.nextRunAt()).toBe(
        new Date(T0.getTime() + 6 * HOUR).toISOString(),
      );
      const run = await store.startRun();
      clock = new Date(T0.getTime() + 2 * HOUR);
      await store.finishRun(run.id, finished);
      expect(await store.nextRunAt()).toBe(
        new Date(T0.getTime() + 6 * HOUR).toISOString(),
      );
    });

    it('answers the next time of a cron schedule, and nothing for a manual one', async () => {
      const cron = await open({ cron: '0 3 * * *' });
      const next = Date.parse((await cron.nextRunAt())!);
      expect(next).toBeGreaterThan(Date.now());
      expect(next - Date.now()).toBeLessThanOrEqual(DAY);
      expect(new Date(next).getUTCMinutes()).toBe(0);
      const manual = await open({ trigger: 'manual' });
      expect(await manual.nextRunAt()).toBeUndefined();
    });

    it('remembers each before-notice sent, by scope', async () => {
      const store = await open();
      expect(await store.noticeSent('a')).toBe(false);
      await store.recordNotice('a');
      await store.recordNotice('a');
      expect(await store.noticeSent('a')).toBe(true);
      expect(await store.noticeSent('b')).toBe(false);
    });

    it('deletes runs and notices older than the retention, a run its replica never finished too, and keeps the recent ones', async () => {
      const store = await open();
      const old = await store.startRun();
      await store.finishRun(old.id, finished);
      // Its replica stopped, and no run started since (automation turned off).
      const abandoned = await store.startRun();
      await store.recordNotice('old');
      clock = new Date(T0.getTime() + 31 * DAY);

      expect(await store.deleteOlderThan(30 * DAY)).toBe(2);

      expect(await store.getRun(old.id)).toBeUndefined();
      expect(await store.getRun(abandoned.id)).toBeUndefined();
      expect(await store.noticeSent('old')).toBe(false);

      const recent = await store.startRun();
      await store.finishRun(recent.id, finished);
      const running = await store.startRun();
      await store.recordNotice('recent');
      clock = new Date(T0.getTime() + 40 * DAY);

      expect(await store.deleteOlderThan(30 * DAY)).toBe(0);
      expect(await store.getRun(recent.id)).toBeDefined();
      expect(await store.getRun(running.id)).toBeDefined();
      expect(await store.noticeSent('recent')).toBe(true);
    });
  },
);
