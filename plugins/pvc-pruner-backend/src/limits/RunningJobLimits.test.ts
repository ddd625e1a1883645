import { TestDatabaseId } from '@backstage/backend-test-utils';
import knexFactory, { Knex } from 'knex';
import { PruneJob } from 'backstage-plugin-pvc-pruner-common';
import { storeTestDatabases } from '../__testUtils__/testDatabases';
import { PruneJobStore } from '../database';
import { RunningJobLimits, RunningJobScope } from './RunningJobLimits';
import { TooManyRequestsError } from './TooManyRequestsError';

const databases = storeTestDatabases();

// Creating a PostgreSQL database for the first test can take seconds.
jest.setTimeout(30_000);

const ALICE = 'user:default/alice';
const BOB = 'user:default/bob';

const scope = (overrides: Partial<RunningJobScope> = {}): RunningJobScope => ({
  requestedBy: ALICE,
  cluster: 'demo',
  namespace: 'shop',
  statefulSet: 'orders-db',
  ...overrides,
});

/** A database service on `knex`, as each replica has its own pool. */
const on = (knex: Knex) =>
  PruneJobStore.create({
    database: { getClient: async () => knex, migrations: { skip: false } },
  });

describe.each(databases.eachSupportedId())(
  'RunningJobLimits on %s',
  (databaseId: TestDatabaseId) => {
    let knex: Knex;
    let store: PruneJobStore;
    const pools: Knex[] = [];

    beforeEach(async () => {
      knex = await databases.init(databaseId);
      store = await on(knex);
    });

    afterEach(async () => {
      await Promise.all(pools.splice(0).map(p => p.destroy()));
    });

    /** Starts a job as PruneJobs does: the early check, then admit. */
    async function start(
      limits: RunningJobLimits,
      s: RunningJobScope,
      into = store,
      dryRun = true,
    ): Promise<PruneJob> {
      await limits.ensureRoom(s);
      return limits.admit(
        s,
        () =>
          into.createJob({
            entityRef: 'component:default/orders',
            cluster: s.cluster,
            namespace: s.namespace,
            statefulSet: s.statefulSet,
            dryRun,
            requestedBy: s.requestedBy,
            pvcs: [{ name: 'data-orders-db-2', uid: 'u2' }],
          }),
        job => into.deleteJob(job.id),
      );
    }

    it('refuses a user’s job over the limit with a 429 saying how many run, dry runs and queued ones included; other users are not counted', async () => {
      const limits = new RunningJobLimits(store, {
        perUser: 2,
        perStatefulSet: 10,
      });
      const queued = await start(limits, scope({ statefulSet: 'a' }));
      const running = await start(
        limits,
        scope({ statefulSet: 'b' }),
        store,
        false,
      );
      await store.updateJob(running.id, { status: 'running' });

      const refused = start(limits, scope({ statefulSet: 'c' }));

      await expect(refused).rejects.toThrow(TooManyRequestsError);
      await expect(refused).rejects.toThrow(
        'You have 2 prune jobs running, dry runs included (the limit is 2); wait for one to finish',
      );
      await expect(refused).rejects.toMatchObject({ statusCode: 429 });
      await expect(
        start(limits, scope({ requestedBy: BOB, statefulSet: 'c' })),
      ).resolves.toBeDefined();
      // A finished job frees its place.
      await store.updateJob(queued.id, { status: 'succeeded' });
      await expect(
        start(limits, scope({ statefulSet: 'c' })),
      ).resolves.toBeDefined();
    });

    it('refuses a StatefulSet’s job over its limit, naming the StatefulSet and its cluster, whoever asks', async () => {
      const limits = new RunningJobLimits(store, {
        perUser: 10,
        perStatefulSet: 1,
      });
      await start(limits, scope());

      await expect(start(limits, scope({ requestedBy: BOB }))).rejects.toThrow(
        'StatefulSet shop/orders-db in cluster "demo" has 1 prune job running, dry runs included (the limit is 1); wait for one to finish',
      );
      // Another StatefulSet of the same name elsewhere is another StatefulSet.
      await expect(
        start(limits, scope({ cluster: 'prod' })),
      ).resolves.toBeDefined();
      await expect(
        start(limits, scope({ namespace: 'shop-2' })),
      ).resolves.toBeDefined();
    });

    it('of many jobs started at once, from two replicas, lets no more than the limit stay, and leaves nothing of those it refused', async () => {
      const { client, connection } = knex.client.config;
      const other =
        client === 'pg'
          ? await on(
              pools[
                pools.push(
                  knexFactory({ client, connection, pool: { min: 0, max: 5 } }),
                ) - 1
              ],
            )
          : store; // SQLite :memory: is per connection
      const limitsA = new RunningJobLimits(store, {
        perUser: 3,
        perStatefulSet: 10,
      });
      const limitsB = new RunningJobLimits(other, {
        perUser: 3,
        perStatefulSet: 10,
      });

      const outcomes = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) =>
          i % 2
            ? start(limitsA, scope({ statefulSet: `s${i}` }))
            : start(limitsB, scope({ statefulSet: `s${i}` }), other),
        ),
      );

      const admitted = outcomes.filter(o => o.status === 'fulfilled');
      const refused = outcomes.filter(o => o.status === 'rejected');
      // Racing requests that all count one another may all withdraw: never more than 3 stay.
      expect(admitted.length).toBeLessThanOrEqual(3);
      for (const r of refused)
        expect((r as PromiseRejectedResult).reason).toBeInstanceOf(
          TooManyRequestsError,
        );
      expect((await store.activeJobCounts(scope())).byUser).toBe(
        admitted.length,
      );
      expect(await knex('pvc_pruner_jobs').count({ n: '*' })).toEqual([
        { n: client === 'pg' ? String(admitted.length) : admitted.length },
      ]);
      expect(await knex('pvc_pruner_job_events').count({ n: '*' })).toEqual([
        { n: client === 'pg' ? String(admitted.length) : admitted.length },
      ]);
    });
  },
);
