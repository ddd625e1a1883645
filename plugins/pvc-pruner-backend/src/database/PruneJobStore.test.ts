import { DatabaseService } from '@backstage/backend-plugin-api';
import { TestDatabaseId } from '@backstage/backend-test-utils';
import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import { PruneJob, PruneSummary } from 'backstage-plugin-pvc-pruner-common';
import knexFactory, { Knex } from 'knex';
import { withWallClockSkew } from '../__testUtils__/wallClock';
import { storeTestDatabases } from '../__testUtils__/testDatabases';
import { NewPruneJob, PruneJobStore } from './PruneJobStore';
import { timestampToIso } from './timestamps';

const databases = storeTestDatabases();

const T0 = new Date('2025-06-01T12:00:00.000Z');
const minutes = (n: number) => new Date(T0.getTime() + n * 60_000);

function databaseService(knex: Knex, skip = false): DatabaseService {
  return { getClient: async () => knex, migrations: { skip } };
}

function newJob(overrides: Partial<NewPruneJob> = {}): NewPruneJob {
  return {
    entityRef: 'component:default/orders',
    cluster: 'dev',
    namespace: 'shop',
    statefulSet: 'orders-db',
    dryRun: false,
    requestedBy: 'user:default/guest',
    pvcs: [
      { name: 'data-orders-db-3', uid: 'u3' },
      { name: 'data-orders-db-4', uid: 'u4' },
      { name: 'data-orders-db-5', uid: 'u5' },
    ],
    ...overrides,
  };
}

/** An automatic prune of orders' StatefulSet in run-1, claimed by `claimants`. */
function automaticJob(claimants: string[]): NewPruneJob {
  return newJob({
    requestedBy: 'plugin:pvc-pruner',
    automatic: {
      onBehalfOf: 'component:default/orders',
      runId: 'run-1',
      grace: '7d',
    },
    claimants,
  });
}

/** A second connection pool to the same database, as another replica has. */
function secondPool(knex: Knex): Knex | undefined {
  const { client, connection } = knex.client.config;
  if (client !== 'pg') return undefined; // SQLite :memory: is per connection
  return knexFactory({ client, connection, pool: { min: 0, max: 5 } });
}

describe.each(databases.eachSupportedId())(
  'PruneJobStore on %s',
  (databaseId: TestDatabaseId) => {
    let knex: Knex;
    let clock: Date;
    let store: PruneJobStore;
    const extraPools: Knex[] = [];

    beforeEach(async () => {
      knex = await databases.init(databaseId);
      clock = T0;
      store = await PruneJobStore.create({
        database: databaseService(knex),
        now: () => clock,
      });
    });

    afterEach(async () => {
      await Promise.all(extraPools.splice(0).map(k => k.destroy()));
    });

    it('migrates idempotently, and not at all when migrations are skipped', async () => {
      await expect(
        PruneJobStore.create({ database: databaseService(knex) }),
      ).resolves.toBeInstanceOf(PruneJobStore);
      expect(await knex.schema.hasTable('pvc_pruner_jobs')).toBe(true);
      expect(await knex.schema.hasTable('pvc_pruner_job_events')).toBe(true);

      const fresh = await databases.init(databaseId);
      await PruneJobStore.create({ database: databaseService(fresh, true) });
      expect(await fresh.schema.hasTable('pvc_pruner_jobs')).toBe(false);
    });

    it('creates a queued job with its first event', async () => {
      const job = await store.createJob(newJob());
      expect(job).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        entityRef: 'component:default/orders',
        cluster: 'dev',
        namespace: 'shop',
        statefulSet: 'orders-db',
        dryRun: false,
        status: 'queued',
        requestedBy: 'user:default/guest',
        pvcs: newJob().pvcs,
        createdAt: T0.toISOString(),
        summary: {
          deleted: [],
          terminating: [],
          skipped: [],
          failed: [],
          bytesReclaimed: 0,
        },
      });
      expect(await store.getJob(job.id)).toEqual(job);
      expect(await store.listEvents(job.id)).toEqual([
        {
          jobId: job.id,
          seq: 1,
          type: 'job-queued',
          at: T0.toISOString(),
          message:
            'Queued a prune of 3 claims of StatefulSet shop/orders-db by user:default/guest',
        },
      ]);

      const dry = await store.createJob(
        newJob({
          id: 'fixed-id',
          dryRun: true,
          pvcs: [{ name: 'a', uid: 'b' }],
        }),
      );
      expect(dry.id).toBe('fixed-id');
      expect((await store.getJob('fixed-id'))?.dryRun).toBe(true);
      expect((await store.listEvents('fixed-id'))[0].message).toBe(
        'Queued a dry run of 1 claim of StatefulSet shop/orders-db by user:default/guest',
      );
      expect(await store.getJob('no-such-job')).toBeUndefined();
    });

    it('stores an automatic prune with the entity it acts for and its run, and says so in its first event', async () => {
      const job = await store.createJob(
        automaticJob(['component:default/orders', 'component:default/shop']),
      );
      expect(job).toMatchObject({
        requestedBy: 'plugin:pvc-pruner',
        onBehalfOf: 'component:default/orders',
        automaticRunId: 'run-1',
        claimants: ['component:default/orders', 'component:default/shop'],
      });
      expect(await store.getJob(job.id)).toEqual(job);
      expect((await store.listEvents(job.id))[0].message).toBe(
        "Automatic prune of 3 claims of StatefulSet shop/orders-db, per component:default/orders's auto-prune annotation (7d); queued by plugin:pvc-pruner in run run-1",
      );
      const manual = await store.createJob(newJob());
      expect(await store.getJob(manual.id)).not.toHaveProperty('onBehalfOf');
      expect(await store.getJob(manual.id)).not.toHaveProperty('claimants');
    });

    it('lists a prune in the history of every entity that claimed its StatefulSet, and one stored without claimants in the one it went through', async () => {
      const both = ['component:default/orders', 'component:default/shop'];
      clock = minutes(1);
      const automatic = await store.createJob(automaticJob(both));
      clock = minutes(2);
      const manual = await store.createJob(newJob({ claimants: both }));
      clock = minutes(3);
      const unrecorded = await store.createJob(newJob());
      const historyOf = async (entityRef: string) =>
        (await store.listJobs({ entityRef })).items.map(j => j.id);

      expect(await historyOf('component:default/orders')).toEqual([
        unrecorded.id,
        manual.id,
        automatic.id,
      ]);
      expect(await historyOf('component:default/shop')).toEqual([
        manual.id,
        automatic.id,
      ]);
      expect(await historyOf('component:default/other')).toEqual([]);
      const listed = new Map(
        (await store.listJobs()).items.map(j => [j.id, j.claimants]),
      );
      expect(listed.get(automatic.id)).toEqual(both);
      expect(listed.get(manual.id)).toEqual(both);
      expect(listed.get(unrecorded.id)).toBeUndefined();
      const page = await store.listJobs({
        entityRef: 'component:default/shop',
        limit: 1,
      });
      expect(page.items.map(j => j.id)).toEqual([manual.id]);
      expect(
        (
          await store.listJobs({
            entityRef: 'component:default/shop',
            cursor: page.nextCursor,
          })
        ).items.map(j => j.id),
      ).toEqual([automatic.id]);
    });

    it('rejects a duplicate id and leaves the first job alone', async () => {
      await store.createJob(newJob({ id: 'dup' }));
      // Not `rejects.toThrow()`: when another test file in the same jest
      // worker loaded better-sqlite3 first, its errors come from that file's
      // realm and are not `instanceof Error` here.
      const error = await store.createJob(newJob({ id: 'dup' })).then(
        () => undefined,
        e => e,
      );
      expect(String(error?.message)).toMatch(/unique/i);
      expect(await store.listEvents('dup')).toHaveLength(1);
    });

    it('appends events in seq order and replays after a seq', async () => {
      const job = await store.createJob(newJob());
      const started = await store.appendEvent({
        jobId: job.id,
        type: 'job-started',
        at: minutes(1).toISOString(),
        message: 'Prune started',
      });
      expect(started.seq).toBe(2);
      const outcome = {
        name: 'data-orders-db-3',
        uid: 'u3',
        ordinal: 3,
        bytes: 21474836480,
        volume: {
          name: 'pv-1',
          reclaimPolicy: 'Delete',
          fate: 'deleted' as const,
        },
      };
      const deleted = await store.appendEvent({
        jobId: job.id,
        type: 'pvc-deleted',
        at: minutes(2).toISOString(),
        pvc: 'data-orders-db-3',
        message: 'Deleted data-orders-db-3',
        outcome,
      });
      await store.appendEvent({
        jobId: job.id,
        type: 'job-finished',
        at: minutes(3).toISOString(),
        status: 'succeeded',
        message: 'Done',
      });

      const all = await store.listEvents(job.id);
      expect(all.map(e => [e.seq, e.type])).toEqual([
        [1, 'job-queued'],
        [2, 'job-started'],
        [3, 'pvc-deleted'],
        [4, 'job-finished'],
      ]);
      expect(all[2]).toEqual(deleted);
      expect(all[2]).toEqual({
        jobId: job.id,
        seq: 3,
        type: 'pvc-deleted',
        at: minutes(2).toISOString(),
        pvc: 'data-orders-db-3',
        message: 'Deleted data-orders-db-3',
        outcome,
      });
      expect(all[3].status).toBe('succeeded');
      expect(all[3]).not.toHaveProperty('pvc');
      expect(all[3]).not.toHaveProperty('outcome');

      expect((await store.listEvents(job.id, 2)).map(e => e.seq)).toEqual([
        3, 4,
      ]);
      expect((await store.listEvents(job.id, 1, 2)).map(e => e.seq)).toEqual([
        2, 3,
      ]);
      expect(await store.listEvents(job.id, 4)).toEqual([]);

      // Another job's log is separate.
      const other = await store.createJob(newJob());
      expect((await store.listEvents(other.id)).map(e => e.seq)).toEqual([1]);

      await expect(
        store.appendEvent({
          jobId: 'no-such-job',
          type: 'job-started',
          at: T0.toISOString(),
          message: 'x',
        }),
      ).rejects.toThrow(NotFoundError);
      await expect(
        store.appendEvent({
          jobId: job.id,
          type: 'job-started',
          at: 'yesterday',
          message: 'x',
        }),
      ).rejects.toThrow(InputError);
    });

    it('gives concurrent appends from two replicas gap-free seqs', async () => {
      const job = await store.createJob(newJob());
      const otherPool = secondPool(knex);
      if (otherPool) extraPools.push(otherPool);
      const replica = await PruneJobStore.create({
        database: databaseService(otherPool ?? knex),
      });
      const stores = [store, replica];
      const appended = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          stores[i % 2].appendEvent({
            jobId: job.id,
            type: 'pvc-deleting',
            at: minutes(1).toISOString(),
            message: `append ${i}`,
          }),
        ),
      );
      const seqs = appended.map(e => e.seq).sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i + 2));

      const events = await store.listEvents(job.id);
      expect(events.map(e => e.seq)).toEqual(
        Array.from({ length: 41 }, (_, i) => i + 1),
      );
      // Each stored event is the one its append returned.
      for (const event of appended) {
        expect(events[event.seq - 1]).toEqual(event);
      }
    });

    it('pages newest first with a cursor', async () => {
      // Several jobs share a createdAt: the id breaks the tie.
      const created: PruneJob[] = [];
      const times = [0, 1, 1, 1, 2, 3, 3, 4];
      for (const [i, t] of times.entries()) {
        clock = minutes(t);
        created.push(await store.createJob(newJob()));
        // Interleave another entity's jobs; they must not show up.
        if (i % 3 === 0) {
          await store.createJob(
            newJob({ entityRef: 'component:default/other' }),
          );
        }
      }
      const newestFirst = (a: PruneJob, b: PruneJob) => {
        if (a.createdAt !== b.createdAt) {
          return a.createdAt < b.createdAt ? 1 : -1;
        }
        return a.id < b.id ? 1 : -1;
      };
      const expected = [...created].sort(newestFirst).map(j => j.id);

      const seen: string[] = [];
      let cursor: string | undefined;
      const pageSizes: number[] = [];
      const cursors: string[] = [];
      do {
        const page = await store.listJobs({
          entityRef: 'component:default/orders',
          limit: 3,
          cursor,
        });
        pageSizes.push(page.items.length);
        seen.push(...page.items.map(j => j.id));
        cursor = page.nextCursor;
        if (cursor) cursors.push(cursor);
      } while (cursor);
      expect(cursors).toEqual([
        expect.stringMatching(/^[A-Za-z0-9_-]+$/),
        expect.stringMatching(/^[A-Za-z0-9_-]+$/),
      ]);
      expect(pageSizes).toEqual([3, 3, 2]);
      expect(seen).toEqual(expected);

      // Exactly a page full: no next cursor.
      const exact = await store.listJobs({
        entityRef: 'component:default/orders',
        limit: 8,
      });
      expect(exact.items.map(j => j.id)).toEqual(expected);
      expect(exact.nextCursor).toBeUndefined();

      // Without an entity: everything, still newest first.
      const all = await store.listJobs({ limit: 100 });
      expect(all.items).toHaveLength(11);
      const createdAts = all.items.map(j => j.createdAt);
      expect([...createdAts].sort().reverse()).toEqual(createdAts);
      expect((await store.listJobs()).items).toHaveLength(11);

      // Full jobs come back, not just ids.
      expect(exact.items[exact.items.length - 1]).toEqual(created[0]);
    });

    it('rejects an invalid cursor or limit', async () => {
      await store.createJob(newJob());
      const b64 = (s: string) => Buffer.from(s).toString('base64url');
      for (const cursor of [
        'not a cursor!',
        '',
        b64('not json'),
        b64('[]'),
        b64(JSON.stringify({ v: 1, t: 'yesterday', i: 'x' })),
        b64(JSON.stringify({ v: 1, t: T0.toISOString() })),
        b64(JSON.stringify({ v: 2, t: T0.toISOString(), i: 'x' })),
      ]) {
        await expect(store.listJobs({ cursor })).rejects.toThrow(InputError);
      }
      await expect(store.listJobs({ limit: 0 })).rejects.toThrow(InputError);
      await expect(store.listJobs({ limit: 1.5 })).rejects.toThrow(InputError);
    });

    it('lists active jobs', async () => {
      const queued = await store.createJob(newJob());
      clock = minutes(1);
      const running = await store.createJob(newJob());
      await store.updateJob(running.id, {
        status: 'running',
        startedAt: minutes(1).toISOString(),
      });
      clock = minutes(2);
      const other = await store.createJob(
        newJob({ entityRef: 'component:default/other' }),
      );
      for (const status of [
        'succeeded',
        'failed',
        'aborted',
        'interrupted',
      ] as const) {
        const done = await store.createJob(newJob());
        await store.updateJob(done.id, { status });
      }

      expect((await store.activeJobs()).map(j => [j.id, j.status])).toEqual([
        [queued.id, 'queued'],
        [running.id, 'running'],
        [other.id, 'queued'],
      ]);
      expect(
        (await store.activeJobs('component:default/orders')).map(j => j.id),
      ).toEqual([queued.id, running.id]);
      expect(await store.activeJobs('component:default/none')).toEqual([]);
    });

    it('updates jobs, round-tripping the summary and timestamps', async () => {
      const job = await store.createJob(newJob());
      const summary: PruneSummary = {
        deleted: [
          {
            name: 'data-orders-db-3',
            uid: 'u3',
            ordinal: 3,
            bytes: 21474836480,
            volume: { name: 'pv-3', reclaimPolicy: 'Retain', fate: 'released' },
          },
        ],
        terminating: [],
        skipped: [
          {
            name: 'data-orders-db-4',
            uid: 'u4',
            reason: 'mounted by pod orders-db-4 ✓ "quoted"',
          },
        ],
        failed: [{ name: 'data-orders-db-5', uid: 'u5', reason: 'Conflict' }],
        bytesReclaimed: 0,
      };

      const running = await store.updateJob(job.id, {
        status: 'running',
        startedAt: '2025-06-01T14:00:00.123+02:00',
      });
      expect(running.status).toBe('running');
      expect(running.startedAt).toBe('2025-06-01T12:00:00.123Z');
      expect(running).not.toHaveProperty('finishedAt');
      expect(running).not.toHaveProperty('reason');

      const finished = await store.updateJob(job.id, {
        status: 'failed',
        finishedAt: '2025-06-01T12:05:30.999Z',
        reason: 'a claim could not be deleted',
        summary,
      });
      expect(finished).toEqual({
        ...job,
        status: 'failed',
        startedAt: '2025-06-01T12:00:00.123Z',
        finishedAt: '2025-06-01T12:05:30.999Z',
        reason: 'a claim could not be deleted',
        summary,
      });
      expect(await store.getJob(job.id)).toEqual(finished);
      // An empty patch changes nothing.
      expect(await store.updateJob(job.id, {})).toEqual(finished);

      await expect(
        store.updateJob('no-such-job', { status: 'running' }),
      ).rejects.toThrow(NotFoundError);
      await expect(
        store.updateJob(job.id, { startedAt: 'not a time' }),
      ).rejects.toThrow(InputError);
    });

    it('never changes the status of a job that has already ended, e.g. one another replica marked interrupted', async () => {
      const job = await store.createJob(newJob());
      await store.updateJob(job.id, { status: 'running' });
      clock = minutes(10);
      await store.markInterrupted({ staleAfterMs: 5 * 60_000, reason: 'gone' });

      await expect(
        store.updateJob(job.id, { status: 'succeeded' }),
      ).rejects.toThrow(
        new ConflictError(`Prune job ${job.id} has already ended: interrupted`),
      );
      const summary: PruneSummary = {
        deleted: [{ name: 'data-orders-db-3', uid: 'u3', bytes: 1 }],
        terminating: [],
        skipped: [],
        failed: [],
        bytesReclaimed: 1,
      };
      // What the job did before it learned that is still recorded.
      expect(await store.updateJob(job.id, { summary })).toMatchObject({
        status: 'interrupted',
        reason: 'gone',
        summary,
      });
    });

    it('ends a job and writes its last event together, or neither: a process killed between them cannot leave an ended job whose log never says so', async () => {
      const job = await store.createJob(newJob());
      await store.updateJob(job.id, { status: 'running' });
      const finished = {
        type: 'job-finished' as const,
        status: 'succeeded' as const,
        message: 'Prune succeeded: 3 deleted, 0 skipped, 0 failed',
      };

      // The event cannot be written (an unreadable time): the status stays as it was.
      const failed = await store
        .finishJob(
          job.id,
          { status: 'succeeded', finishedAt: T0.toISOString() },
          { ...finished, at: 'not a time' },
        )
        .then(
          () => undefined,
          e => e,
        );
      expect(failed).toBeDefined();
      expect((await store.getJob(job.id))?.status).toBe('running');
      expect(await store.listEvents(job.id)).toHaveLength(1);

      const last = await store.finishJob(
        job.id,
        { status: 'succeeded', finishedAt: T0.toISOString() },
        { ...finished, at: T0.toISOString() },
      );
      expect(last).toMatchObject({ seq: 2, type: 'job-finished' });
      expect(await store.getJob(job.id)).toMatchObject({
        status: 'succeeded',
        finishedAt: T0.toISOString(),
      });

      // Ended already (e.g. interrupted by another replica): neither is written.
      await expect(
        store.finishJob(
          job.id,
          { status: 'failed' },
          { ...finished, at: T0.toISOString() },
        ),
      ).rejects.toThrow(/has already ended: succeeded/);
      expect(await store.listEvents(job.id)).toHaveLength(2);
    });

    it('interrupts stale jobs and leaves fresh ones alone', async () => {
      // Created at T0 and never heartbeated: stale once staleBefore > T0.
      const orphanQueued = await store.createJob(newJob());
      // Claimed at T0, then this replica died.
      const orphanRunning = await store.createJob(newJob());
      await store.claim(orphanRunning.id, 'replica-dead');
      await store.updateJob(orphanRunning.id, {
        status: 'running',
        startedAt: T0.toISOString(),
      });
      // Claimed at T0 by a replica that is still alive and heartbeats.
      const live = await store.createJob(newJob());
      await store.claim(live.id, 'replica-live');
      await store.updateJob(live.id, { status: 'running' });
      // Created late: fresh even without a heartbeat.
      clock = minutes(9);
      const young = await store.createJob(newJob());
      // Finished long ago: never touched.
      clock = T0;
      const done = await store.createJob(newJob());
      await store.updateJob(done.id, { status: 'succeeded' });

      clock = minutes(10);
      await store.heartbeat([live.id, done.id], 'replica-live');
      await store.heartbeat([], 'replica-live');

      clock = minutes(11);
      // Stale: no heartbeat since minute 5.
      const staleAfterMs = 6 * 60_000;
      const reason = 'The instance running this job stopped';
      const interrupted = await store.markInterrupted({ staleAfterMs, reason });

      expect(interrupted.map(j => j.id).sort()).toEqual(
        [orphanQueued.id, orphanRunning.id].sort(),
      );
      for (const job of interrupted) {
        expect(job).toMatchObject({
          status: 'interrupted',
          reason,
          finishedAt: minutes(11).toISOString(),
        });
        expect(await store.getJob(job.id)).toEqual(job);
        const events = await store.listEvents(job.id);
        expect(events[events.length - 1]).toEqual({
          jobId: job.id,
          seq: events.length,
          type: 'job-finished',
          status: 'interrupted',
          at: minutes(11).toISOString(),
          message: reason,
        });
      }
      expect((await store.getJob(live.id))?.status).toBe('running');
      expect((await store.getJob(young.id))?.status).toBe('queued');
      expect(await store.getJob(done.id)).toMatchObject({
        status: 'succeeded',
      });
      expect(await store.getJob(done.id)).not.toHaveProperty('finishedAt');
      expect(await store.listEvents(live.id)).toHaveLength(1);

      // Finished jobs are not heartbeated or claimed.
      const doneRow = await knex('pvc_pruner_jobs')
        .where({ id: done.id })
        .first();
      expect(doneRow.owner_instance).toBeNull();
      expect(await store.claim(done.id, 'x')).toBe(false);
      expect(await store.claim('no-such-job', 'x')).toBe(false);
      const liveRow = await knex('pvc_pruner_jobs')
        .where({ id: live.id })
        .first();
      expect(liveRow.owner_instance).toBe('replica-live');
      expect(timestampToIso(liveRow.heartbeat_at)).toBe(
        minutes(10).toISOString(),
      );

      // A second sweep finds nothing more to do.
      expect(await store.markInterrupted({ staleAfterMs, reason })).toEqual([]);

      // The live replica stops heartbeating: now it is stale too.
      clock = minutes(30);
      const later = await store.markInterrupted({
        staleAfterMs: 10 * 60_000,
        reason,
      });
      expect(later.map(j => j.id).sort()).toEqual([live.id, young.id].sort());
    });

    it('reads the time from the database server', async () => {
      const live = await PruneJobStore.create({
        database: databaseService(knex),
      });

      const dbTime = await live.currentTime();

      // Here the database runs on this machine, so its clock is this process's.
      expect(Math.abs(dbTime.getTime() - Date.now())).toBeLessThan(5000);
    });

    it('judges staleness by the database clock: a replica whose own clock runs an hour fast interrupts no live job', async () => {
      // Both replicas take time from the database, as in production.
      const replicaA = await PruneJobStore.create({
        database: databaseService(knex),
      });
      const job = await replicaA.createJob(newJob());
      await replicaA.claim(job.id, 'replica-a');
      await replicaA.heartbeat([job.id], 'replica-a');
      const otherPool = secondPool(knex);
      if (otherPool) extraPools.push(otherPool);
      const replicaB = await PruneJobStore.create({
        database: databaseService(otherPool ?? knex),
      });

      // Replica B's wall clock is an hour ahead.

      await withWallClockSkew(60 * 60_000, async () => {
        expect(
          await replicaB.markInterrupted({
            staleAfterMs: 30_000,
            reason: 'stale',
          }),
        ).toEqual([]);
      });
      expect((await replicaA.getJob(job.id))?.status).toBe('queued');
    });

    it('lets only one of two concurrent sweepers interrupt a job', async () => {
      const jobs = await Promise.all(
        Array.from({ length: 5 }, () => store.createJob(newJob())),
      );
      const otherPool = secondPool(knex);
      if (otherPool) extraPools.push(otherPool);
      const replica = await PruneJobStore.create({
        database: databaseService(otherPool ?? knex),
        now: () => minutes(20),
      });
      clock = minutes(20);
      const options = { staleAfterMs: 10 * 60_000, reason: 'stale' };
      const [a, b] = await Promise.all([
        store.markInterrupted(options),
        replica.markInterrupted(options),
      ]);
      expect([...a, ...b].map(j => j.id).sort()).toEqual(
        jobs.map(j => j.id).sort(),
      );
      for (const job of jobs) {
        const events = await store.listEvents(job.id);
        expect(events.map(e => e.type)).toEqual(['job-queued', 'job-finished']);
      }
    });

    describe('retention', () => {
      const DAY = 24 * 60 * 60_000;
      const days = (n: number) => new Date(T0.getTime() + n * DAY);

      async function finish(id: string, at: Date) {
        await store.finishJob(
          id,
          { status: 'succeeded', finishedAt: at.toISOString() },
          {
            type: 'job-finished',
            status: 'succeeded',
            at: at.toISOString(),
            message: 'done',
          },
        );
      }

      it('deletes jobs that finished more than the retention ago, with their events and claimants, and never a queued or running one', async () => {
        const old = await store.createJob(
          automaticJob(['component:default/orders']),
        );
        await finish(old.id, T0);
        const queued = await store.createJob(newJob());
        const running = await store.createJob(newJob());
        await store.updateJob(running.id, { status: 'running' });
        const recent = await store.createJob(newJob());
        await finish(recent.id, days(80));
        clock = days(91);

        expect(await store.deleteFinishedFor(90 * DAY)).toBe(1);

        expect(await store.getJob(old.id)).toBeUndefined();
        expect(
          await knex('pvc_pruner_job_events').where('job_id', old.id),
        ).toEqual([]);
        expect(
          await knex('pvc_pruner_job_claimants').where('job_id', old.id),
        ).toEqual([]);
        for (const kept of [queued, running, recent])
          expect(await store.getJob(kept.id)).toBeDefined();
        expect((await store.listEvents(recent.id)).map(e => e.type)).toEqual([
          'job-queued',
          'job-finished',
        ]);
        expect(await store.deleteFinishedFor(90 * DAY)).toBe(0);
      });

      it('deletes thousands of old jobs, a chunk at a time', async () => {
        const rows = Array.from({ length: 1100 }, (_, i) => ({
          id: `old-${i}`,
          entity_ref: 'component:default/orders',
          cluster: 'dev',
          namespace: 'shop',
          stateful_set: 'orders-db',
          dry_run: true,
          status: i % 2 ? 'succeeded' : 'interrupted',
          requested_by: 'user:default/guest',
          pvcs: '[]',
          created_at: T0,
          finished_at: i % 3 ? T0 : null,
          summary: '{}',
          last_seq: 1,
        }));
        await knex.batchInsert('pvc_pruner_jobs', rows, 200);
        await knex.batchInsert(
          'pvc_pruner_job_events',
          rows.map(r => ({
            job_id: r.id,
            seq: 1,
            type: 'job-queued',
            at: T0,
            message: 'queued',
          })),
          200,
        );
        clock = days(91);

        expect(await store.deleteFinishedFor(90 * DAY)).toBe(1100);
        expect(
          Number((await knex('pvc_pruner_jobs').count({ n: '*' }))[0].n),
        ).toBe(0);
        expect(
          Number((await knex('pvc_pruner_job_events').count({ n: '*' }))[0].n),
        ).toBe(0);
      });

      it("ages jobs by the database's clock: a replica whose own clock runs a year fast deletes nothing recent", async () => {
        const live = await PruneJobStore.create({
          database: databaseService(knex),
        });
        const job = await live.createJob(newJob());
        const finishedAt = await live.currentTime();
        await live.finishJob(
          job.id,
          { status: 'succeeded', finishedAt: finishedAt.toISOString() },
          {
            type: 'job-finished',
            status: 'succeeded',
            at: finishedAt.toISOString(),
            message: 'done',
          },
        );

        await withWallClockSkew(365 * DAY, async () => {
          expect(await live.deleteFinishedFor(90 * DAY)).toBe(0);
        });
        expect(await live.getJob(job.id)).toBeDefined();
      });
    });
  },
);
