import { mockServices } from '@backstage/backend-test-utils';
import type { NotificationSendOptions } from '@backstage/plugin-notifications-node';
import type {
  PruneJob,
  PruneRequest,
  PvcOutcome,
} from 'backstage-plugin-pvc-pruner-common';
import { memoryDatabase } from '../__testUtils__/memoryJobStore';
import { readAutoPruneOptions } from './autoPruneOptions';
import { ConfigReader } from '@backstage/config';
import { AnnouncementStore } from './AnnouncementStore';
import { AnnouncingPlanner } from './AnnouncingPlanner';
import { AutoPruneNotifier, formatWhen } from './AutoPruneNotifier';
import { AutoPruneRunStore } from './AutoPruneRunStore';
import { AUTO_PRUNE_TASK_ID, AutoPruneTask } from './AutoPruneTask';
import { describeKeep } from './describeKeep';
import type { AutoPrunePlan, PlannedClaim, PlannedGroup } from './types';

/*
 * The run over a real run store (SQLite) and the real notifier, with a fake
 * planner, fake jobs that end as each test says, and a notification service
 * that records what it is asked to send.
 */

const GIB = 2 ** 30;
const NOW = Date.now();
const iso = (hoursFromNow: number) =>
  new Date(NOW + hoursFromNow * 3600_000).toISOString();

function claim(
  sts: string,
  ordinal: number,
  eligibleInHours: number,
  gib = 1,
): PlannedClaim {
  return {
    name: `data-${sts}-${ordinal}`,
    uid: `${sts}-${ordinal}`,
    ordinal,
    bytes: gib * GIB,
    eligibleAt: iso(eligibleInHours),
    retained: false,
    monthlyCost: 0.1 * gib,
  };
}

function group(
  sts: string,
  parts: Partial<Pick<PlannedGroup, 'eligible' | 'upcoming' | 'kept'>>,
): PlannedGroup {
  const entityRef = `component:default/${sts}`;
  return {
    cluster: 'demo',
    namespace: 'shop',
    statefulSet: sts,
    through: {
      entity: {
        apiVersion: 'backstage.io/v1alpha1',
        kind: 'Component',
        metadata: { name: sts },
      },
      entityRef,
      labelSelector: `backstage.io/kubernetes-id=${sts}`,
    },
    claimants: [entityRef],
    graceMs: 7 * 24 * 3600_000,
    eligible: parts.eligible ?? [],
    upcoming: parts.upcoming ?? [],
    kept: parts.kept ?? [],
  };
}

type Ending = (request: PruneRequest) => Partial<PruneJob>;

/** Jobs that are `running` when started and, once read back, end as `ending` says (all confirmed and deleted unless told). */
class FakeJobs {
  readonly started: PruneRequest[] = [];
  private readonly ended = new Map<string, PruneJob>();
  constructor(private readonly ending: Ending = () => ({})) {}

  readonly prunes = {
    start: async ({ request }: { request: PruneRequest }) => {
      this.started.push(request);
      const id = `job-${this.started.length}`;
      const outcomes: PvcOutcome[] = request.pvcs.map(p => ({
        ...p,
        bytes: GIB,
      }));
      const base: PruneJob = {
        id,
        cluster: request.cluster,
        namespace: request.namespace,
        statefulSet: request.statefulSet,
        dryRun: request.dryRun ?? false,
        status: 'running',
        requestedBy: 'plugin:pvc-pruner',
        pvcs: request.pvcs,
        createdAt: new Date().toISOString(),
        summary: {
          deleted: [],
          terminating: [],
          skipped: [],
          failed: [],
          bytesReclaimed: 0,
        },
      };
      this.ended.set(id, {
        ...base,
        status: 'succeeded',
        summary: {
          ...base.summary,
          deleted: outcomes,
          bytesReclaimed: request.dryRun ? 0 : outcomes.length * GIB,
        },
        ...this.ending(request),
      });
      return base;
    },
  };

  readonly store = { getJob: async (id: string) => this.ended.get(id) };

  /** The real (not dry-run) prunes started. */
  get realPrunes() {
    return this.started.filter(r => !r.dryRun);
  }
}

let close: () => Promise<void>;
let runs: AutoPruneRunStore;

beforeEach(async () => {
  const memory = memoryDatabase();
  close = memory.close;
  runs = await AutoPruneRunStore.create({
    database: memory.database,
    schedule: { frequency: { hours: 1 }, timeout: { minutes: 30 } },
  });
});

afterEach(() => close());

function setUp(options: {
  plan: AutoPrunePlan | (() => Promise<AutoPrunePlan>);
  jobs?: FakeJobs;
  config?: object;
  send?: (n: NotificationSendOptions) => Promise<void>;
  notificationsInstalled?: boolean;
  pruneDisabledReason?: string;
}) {
  const sent: NotificationSendOptions[] = [];
  const logger = mockServices.logger.mock();
  const jobs = options.jobs ?? new FakeJobs();
  const planning = {
    plan: jest.fn(
      typeof options.plan === 'function'
        ? options.plan
        : async () => options.plan as AutoPrunePlan,
    ),
  };
  const notifier = new AutoPruneNotifier({
    notifications: {
      send: async n => {
        if (options.send) await options.send(n);
        sent.push(n);
      },
    },
    systemMetadata: {
      getInstalledPlugins: async () =>
        options.notificationsInstalled === false
          ? [{ pluginId: 'pvc-pruner' }]
          : [{ pluginId: 'pvc-pruner' }, { pluginId: 'notifications' }],
    },
    logger,
  });
  const task = new AutoPruneTask(
    {
      options: readAutoPruneOptions(
        new ConfigReader({ autoPrune: { enabled: true, ...options.config } }),
      ),
      planning,
      prunes: jobs.prunes,
      jobs: jobs.store,
      runs,
      notifier,
      logger,
      currency: 'USD',
      pruneDisabledReason: options.pruneDisabledReason,
    },
    { pollMs: 1, sleep: async () => {} },
  );
  return { task, jobs, sent, logger, planning };
}

const planOf = (...groups: PlannedGroup[]): AutoPrunePlan => ({
  considered: groups.reduce(
    (n, g) => n + g.eligible.length + g.upcoming.length + g.kept.length,
    0,
  ),
  groups,
  clustersFailed: [],
});

/** Runs the task, which must plan and start nothing and be recorded refused with why; answers its result. */
async function runRefused(
  {
    task,
    jobs,
    planning,
  }: Pick<ReturnType<typeof setUp>, 'task' | 'jobs' | 'planning'>,
  why: string,
) {
  const result = await task.run();
  expect(planning.plan).not.toHaveBeenCalled();
  expect(jobs.started).toEqual([]);
  expect(await runs.lastRun()).toMatchObject({
    status: 'refused',
    stoppedBecause: expect.stringContaining(why),
  });
  return result;
}

describe('AutoPruneTask', () => {
  it('is a global scheduler task, scheduled only when pvcPruner.autoPrune.enabled', async () => {
    const scheduler = mockServices.scheduler.mock();
    const { task } = setUp({ plan: planOf() });
    expect(await task.schedule(scheduler)).toBe(true);
    expect(scheduler.scheduleTask).toHaveBeenCalledWith(
      expect.objectContaining({
        id: AUTO_PRUNE_TASK_ID,
        scope: 'global',
        frequency: { hours: 1 },
      }),
    );

    const disabled = mockServices.scheduler.mock();
    const off = setUp({ plan: planOf(), config: { enabled: false } });
    expect(await off.task.schedule(disabled)).toBe(false);
    expect(disabled.scheduleTask).not.toHaveBeenCalled();
  });

  it('dry-runs, then prunes the claims the dry run confirmed, and tells the owners what was deleted, kept and reclaimed', async () => {
    const jobs = new FakeJobs(request =>
      request.dryRun
        ? {
            summary: {
              deleted: [{ name: 'data-orders-1', uid: 'orders-1' }],
              skipped: [
                { name: 'data-orders-2', uid: 'orders-2', reason: 'mounted' },
              ],
              terminating: [],
              failed: [],
              bytesReclaimed: 0,
            },
          }
        : {
            summary: {
              deleted: [
                {
                  name: 'data-orders-1',
                  uid: 'orders-1',
                  snapshot: {
                    name: 'data-orders-1-snap',
                    expiresAt: '2026-12-31T00:00:00.000Z',
                  },
                },
              ],
              skipped: [],
              terminating: [],
              failed: [],
              bytesReclaimed: GIB,
            },
          },
    );
    const { task, sent } = setUp({
      jobs,
      plan: planOf(
        group('orders', {
          eligible: [claim('orders', 1, -2), claim('orders', 2, -1)],
          kept: [
            {
              name: 'data-orders-0',
              uid: 'orders-0',
              keep: {
                source: 'card',
                reason: 'audit hold',
                keptBy: 'user:default/alice',
              },
            },
          ],
        }),
      ),
    });

    const result = await task.run();

    expect(jobs.started.map(r => [r.dryRun, r.pvcs.map(p => p.name)])).toEqual([
      [true, ['data-orders-1', 'data-orders-2']],
      [false, ['data-orders-1']],
    ]);
    expect(jobs.started[0].entityRef).toBe('component:default/orders');
    expect(result).toMatchObject({
      status: 'finished',
      eligible: 2,
      deleted: 1,
      kept: 1,
      bytesDeleted: GIB,
      statefulSets: 1,
      dryRunFailures: 0,
    });
    expect(await runs.lastRun()).toMatchObject({
      status: 'finished',
      deleted: 1,
      bytesDeleted: GIB,
    });
    expect(sent).toHaveLength(1);
    const [after] = sent;
    expect(after.recipients).toEqual({
      type: 'entity',
      entityRef: 'component:default/orders',
    });
    expect(after.payload.title).toBe(
      '1 claim of orders pruned automatically: 1.0 GiB and $0.10 a month reclaimed',
    );
    expect(after.payload.description).toContain(
      'data-orders-1: restorable from snapshot data-orders-1-snap until Dec 31, 2026',
    );
    expect(after.payload.description).toContain(
      'data-orders-0: kept: audit hold (by user:default/alice)',
    );
    expect(after.payload.link).toBe(
      '/catalog/default/component/orders/kubernetes',
    );
    expect(after.payload.scope).toBe(
      `pvc-pruner:auto-prune:demo/shop/orders:${iso(-2).slice(0, 10)}`,
    );
  });

  it('stops at maxClaimsPerRun, oldest eligible first, and says so', async () => {
    const { task, jobs } = setUp({
      config: { maxClaimsPerRun: 2 },
      plan: planOf(
        group('newer', { eligible: [claim('newer', 0, -1)] }),
        group('older', {
          eligible: [claim('older', 0, -5), claim('older', 1, -4)],
        }),
      ),
    });

    const result = await task.run();

    expect(jobs.realPrunes.map(r => r.pvcs.map(p => p.name))).toEqual([
      ['data-older-0', 'data-older-1'],
    ]);
    expect(result.status).toBe('stopped-at-limit');
    expect(result.stoppedBecause).toMatch(
      /^stopped at maxClaimsPerRun \(2\): data-newer-0 of demo\/shop\/newer/,
    );
    expect(await runs.lastRun()).toMatchObject({
      status: 'stopped-at-limit',
      deleted: 2,
      stoppedBecause: result.stoppedBecause,
    });
  });

  it('ends at its timeout while a job still runs, so that the run the scheduler then lets another replica start does not overlap it', async () => {
    const timeout = new AbortController();
    // The dry run of the first StatefulSet never ends; the timeout passes meanwhile.
    const neverEnding = new FakeJobs(() => {
      timeout.abort();
      return { status: 'running' };
    });
    const reads = jest.spyOn(neverEnding.store, 'getJob');
    const { task, jobs } = setUp({
      jobs: neverEnding,
      plan: planOf(
        group('first', { eligible: [claim('first', 0, -5)] }),
        group('second', { eligible: [claim('second', 0, -4)] }),
      ),
    });

    const result = await task.run(timeout.signal);

    expect(jobs.started.map(r => r.statefulSet)).toEqual(['first']);
    // It stopped waiting at once, not at the job deadline (15 minutes of polls).
    expect(reads.mock.calls.length).toBeLessThanOrEqual(2);
    expect(result.stoppedBecause).toBe('the run reached its timeout');
    expect(await runs.lastRun()).toMatchObject({
      stoppedBecause: 'the run reached its timeout',
    });
  });

  it('stops at maxBytesPerRun inside a StatefulSet, pruning the claims that fit, and tells the owners the rest waits', async () => {
    const { task, jobs, sent } = setUp({
      config: { maxBytesPerRun: 3 * GIB },
      plan: planOf(
        group('orders', {
          eligible: [claim('orders', 0, -3, 2), claim('orders', 1, -2, 2)],
        }),
      ),
    });

    const result = await task.run();

    expect(jobs.realPrunes.map(r => r.pvcs.map(p => p.name))).toEqual([
      ['data-orders-0'],
    ]);
    expect(result.status).toBe('stopped-at-limit');
    expect(result.stoppedBecause).toContain('maxBytesPerRun (3.0 GiB)');
    expect(sent[0].payload.description).toContain(
      "data-orders-1: left for the next run (this run's limit)",
    );
  });

  it('does not prune a StatefulSet whose dry run failed, tells its owners why (once, not every run), and prunes the others', async () => {
    const jobs = new FakeJobs(request =>
      request.dryRun && request.statefulSet === 'broken'
        ? { status: 'failed', reason: 'the StatefulSet scaled up' }
        : {},
    );
    const { task, sent } = setUp({
      jobs,
      plan: planOf(
        group('broken', { eligible: [claim('broken', 0, -3)] }),
        group('fine', { eligible: [claim('fine', 0, -2)] }),
      ),
    });

    const result = await task.run();
    await task.run();

    expect(jobs.realPrunes.map(r => r.statefulSet)).toEqual(['fine', 'fine']);
    expect(result).toMatchObject({
      status: 'finished',
      dryRunFailures: 1,
      deleted: 1,
      statefulSets: 1,
    });
    const toldBroken = sent.filter(n => n.payload.scope?.includes('/broken:'));
    expect(toldBroken).toHaveLength(1);
    const [told] = toldBroken;
    expect(told.recipients).toMatchObject({
      entityRef: 'component:default/broken',
    });
    expect(told.payload.title).toBe(
      '1 claim of broken was not pruned: the dry run failed',
    );
    expect(told.payload.description).toContain('the StatefulSet scaled up');
  });

  it('gives back the limits a StatefulSet whose dry run failed took, so it cannot starve the others', async () => {
    const jobs = new FakeJobs(request =>
      request.dryRun && request.statefulSet === 'broken'
        ? { status: 'failed', reason: 'no VolumeSnapshotClass' }
        : {},
    );
    const { task } = setUp({
      jobs,
      config: { maxClaimsPerRun: 2 },
      plan: planOf(
        group('broken', {
          eligible: [claim('broken', 0, -9), claim('broken', 1, -9)],
        }),
        group('fine', { eligible: [claim('fine', 0, -2)] }),
      ),
    });

    const result = await task.run();

    expect(jobs.realPrunes.map(r => r.statefulSet)).toEqual(['fine']);
    expect(result).toMatchObject({ status: 'finished', deleted: 1 });
  });

  it('gives back the limits of the claims a dry run held back, so a claim that can never be pruned does not starve the others', async () => {
    const jobs = new FakeJobs(request =>
      request.dryRun && request.statefulSet === 'mixed'
        ? {
            status: 'incomplete',
            summary: {
              deleted: [{ name: 'data-mixed-1', uid: 'mixed-1' }],
              skipped: [
                {
                  name: 'data-mixed-0',
                  uid: 'mixed-0',
                  reason: 'it has no VolumeSnapshotClass',
                },
              ],
              terminating: [],
              failed: [],
              bytesReclaimed: 0,
            },
          }
        : {},
    );
    const { task } = setUp({
      jobs,
      config: { maxClaimsPerRun: 2 },
      plan: planOf(
        group('mixed', {
          eligible: [claim('mixed', 0, -9), claim('mixed', 1, -9)],
        }),
        group('fine', { eligible: [claim('fine', 0, -2)] }),
      ),
    });

    const result = await task.run();

    expect(jobs.realPrunes.map(r => r.statefulSet)).toEqual(['mixed', 'fine']);
    expect(result).toMatchObject({ status: 'finished', kept: 1 });
  });

  it("goes on with the other StatefulSets when one's prune throws", async () => {
    const jobs = new FakeJobs();
    const start = jobs.prunes.start;
    jobs.prunes.start = async args => {
      if (args.request.statefulSet === 'first')
        throw new Error('cluster demo did not answer');
      return start(args);
    };
    const { task, logger } = setUp({
      jobs,
      plan: planOf(
        group('first', { eligible: [claim('first', 0, -3)] }),
        group('second', { eligible: [claim('second', 0, -2)] }),
      ),
    });

    const result = await task.run();

    expect(jobs.realPrunes.map(r => r.statefulSet)).toEqual(['second']);
    expect(result).toMatchObject({ status: 'finished', deleted: 1 });
    expect(logger.warn).toHaveBeenCalledWith(
      expect.stringContaining(
        'demo/shop/first failed: Error: cluster demo did not answer',
      ),
    );
  });

  it('sends the before-notice of the claims about to become eligible once, not every run', async () => {
    const plan = planOf(
      group('orders', {
        upcoming: [claim('orders', 1, 30), claim('orders', 0, 20)],
      }),
    );
    const { task, sent } = setUp({ plan });

    await task.run();
    await task.run();

    expect(sent).toHaveLength(1);
    expect(sent[0].payload.title).toMatch(
      /^2 claims of orders will be pruned on .+ UTC unless you keep them$/,
    );
    expect(sent[0].payload.scope).toBe(
      `pvc-pruner:auto-prune:demo/shop/orders:${iso(20).slice(0, 10)}`,
    );
    expect(sent[0].payload.description).toContain('data-orders-0');
  });

  it('runs without the notifications backend, logging once that owners cannot be told, and tries the before-notice again next run', async () => {
    const { task, jobs, logger } = setUp({
      send: async () => {
        throw new Error(
          'Failed to send notifications: Error: Request failed with status 404',
        );
      },
      plan: planOf(
        group('orders', {
          eligible: [claim('orders', 0, -1)],
          upcoming: [claim('orders', 1, 10)],
        }),
      ),
    });

    const first = await task.run();
    await task.run();

    expect(first).toMatchObject({ status: 'finished', deleted: 1 });
    expect(jobs.realPrunes).toHaveLength(2);
    const warnings = logger.warn.mock.calls.filter(([m]) =>
      String(m).includes("owners can't be told"),
    );
    expect(warnings).toHaveLength(1);
    expect(
      await runs.noticeSent(
        `pvc-pruner:auto-prune:demo/shop/orders:${iso(10).slice(0, 10)}`,
      ),
    ).toBe(false);
  });

  it('refuses to run with requireNotifications when the notifications backend is not installed, and says why', async () => {
    const { task, jobs, planning } = setUp({
      config: { requireNotifications: true },
      notificationsInstalled: false,
      plan: planOf(group('orders', { eligible: [claim('orders', 0, -1)] })),
    });

    expect(
      (
        await runRefused(
          { task, jobs, planning },
          'requireNotifications is true, and the notifications backend is not installed',
        )
      ).status,
    ).toBe('refused');
  });

  it('runs with requireNotifications when the notifications backend is installed', async () => {
    const { task, jobs } = setUp({
      config: { requireNotifications: true },
      plan: planOf(group('orders', { eligible: [claim('orders', 0, -1)] })),
    });
    expect((await task.run()).status).toBe('finished');
    expect(jobs.realPrunes).toHaveLength(1);
  });

  it('records a run whose planning failed as failed, with why', async () => {
    const { task } = setUp({
      plan: async () => {
        throw new Error('catalog unavailable');
      },
    });
    expect(await task.run()).toMatchObject({
      status: 'failed',
      stoppedBecause: 'the run failed: Error: catalog unavailable',
    });
    expect((await runs.lastRun())?.status).toBe('failed');
  });

  it('is neither scheduled nor run while pruning is disabled (owners could not keep claims through the card), and says why once', async () => {
    const why = 'Pruning is disabled: the permission framework is off';
    const { task, jobs, planning, logger } = setUp({
      pruneDisabledReason: why,
      plan: planOf(group('orders', { eligible: [claim('orders', 0, -1)] })),
    });
    const scheduler = mockServices.scheduler.mock();

    expect(await task.schedule(scheduler)).toBe(false);
    expect(scheduler.scheduleTask).not.toHaveBeenCalled();
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn).toHaveBeenCalledWith(expect.stringContaining(why));

    expect((await runRefused({ task, jobs, planning }, why)).status).toBe(
      'refused',
    );
  });

  describe('a dry run left incomplete by claims it held back', () => {
    const lateKeep = describeKeep({
      source: 'card',
      reason: 'late hold',
      keptBy: 'user:default/bob',
      keptAt: '2026-12-03T08:00:00.000Z',
    });
    const dryRunEnding =
      (skipped: PvcOutcome[], deleted: PvcOutcome[]): Ending =>
      request =>
        request.dryRun
          ? {
              status: 'incomplete',
              reason: 'Not everything was reclaimed',
              summary: {
                deleted,
                skipped,
                terminating: [],
                failed: [],
                bytesReclaimed: 0,
              },
            }
          : {};
    const one = { name: 'data-orders-1', uid: 'orders-1' };
    const two = { name: 'data-orders-2', uid: 'orders-2' };
    const plan = () =>
      planOf(
        group('orders', {
          eligible: [claim('orders', 1, -2), claim('orders', 2, -1)],
        }),
      );

    it('prunes the rest and reports the kept claim as kept, not as a failed dry run', async () => {
      const jobs = new FakeJobs(
        dryRunEnding([{ ...two, reason: lateKeep }], [one]),
      );
      const { task, sent } = setUp({ jobs, plan: plan() });

      const result = await task.run();

      expect(jobs.realPrunes.map(r => r.pvcs)).toEqual([[one]]);
      expect(result).toMatchObject({
        status: 'finished',
        dryRunFailures: 0,
        deleted: 1,
        kept: 1,
      });
      expect(result.outcomes).toEqual([
        expect.objectContaining({
          outcome: 'pruned',
          deleted: ['data-orders-1'],
          kept: [`data-orders-2: ${lateKeep}`],
        }),
      ]);
      expect(sent).toHaveLength(1);
      expect(sent[0].payload.title).toContain('pruned automatically');
      expect(sent[0].payload.description).toContain(
        'data-orders-2: kept by user:default/bob on 3 Dec: late hold',
      );
    });

    it('prunes nothing and fails nothing when every claim was kept', async () => {
      const jobs = new FakeJobs(
        dryRunEnding(
          [
            { ...one, reason: lateKeep },
            { ...two, reason: lateKeep },
          ],
          [],
        ),
      );
      const { task, sent } = setUp({ jobs, plan: plan() });

      const result = await task.run();

      expect(jobs.realPrunes).toEqual([]);
      expect(result).toMatchObject({ dryRunFailures: 0, kept: 2 });
      expect(result.outcomes).toEqual([
        expect.objectContaining({ outcome: 'kept' }),
      ]);
      expect(sent).toEqual([]);
    });

    it('prunes the rest when the dry run held back a claim for a reason of its own (no VolumeSnapshotClass), and tells the owners why it was kept', async () => {
      const noClass =
        'it has no VolumeSnapshotClass, and pvcPruner.snapshots.required is true';
      const jobs = new FakeJobs(
        dryRunEnding([{ ...two, reason: noClass }], [one]),
      );
      const { task, sent } = setUp({ jobs, plan: plan() });

      const result = await task.run();

      expect(jobs.realPrunes.map(r => r.pvcs)).toEqual([[one]]);
      expect(result).toMatchObject({ dryRunFailures: 0, deleted: 1, kept: 1 });
      expect(result.outcomes).toEqual([
        expect.objectContaining({
          outcome: 'pruned',
          kept: [`data-orders-2: ${noClass}`],
        }),
      ]);
      expect(sent[0].payload.description).toContain(
        `data-orders-2: ${noClass}`,
      );
    });

    it('is still a failed dry run when it confirmed no claim and held one back for another reason than a keep', async () => {
      const jobs = new FakeJobs(
        dryRunEnding(
          [
            { ...two, reason: lateKeep },
            { ...one, reason: 'its snapshot failed' },
          ],
          [],
        ),
      );
      const { task } = setUp({ jobs, plan: plan() });

      const result = await task.run();

      expect(jobs.realPrunes).toEqual([]);
      expect(result).toMatchObject({ dryRunFailures: 1 });
      expect(result.outcomes).toEqual([
        expect.objectContaining({ outcome: 'dry-run-failed' }),
      ]);
    });
  });
});

describe('AutoPruneTask with announcements', () => {
  const NOTIFY_BEFORE = 2 * 24 * 3600_000;
  let clock: Date;
  let announcements: AnnouncementStore;
  let closeAnnouncements: () => Promise<void>;

  beforeEach(async () => {
    const memory = memoryDatabase();
    closeAnnouncements = memory.close;
    clock = new Date(NOW);
    announcements = await AnnouncementStore.create({
      database: memory.database,
      now: () => clock,
    });
  });

  afterEach(() => closeAnnouncements());

  /** The task over the planner's plans (in turn), each announced by the store on the test's clock. */
  function announcing(...plans: AutoPrunePlan[]) {
    const inner = {
      plan: jest.fn(async () => (plans.length > 1 ? plans.shift()! : plans[0])),
    };
    return setUp({
      plan: () =>
        new AnnouncingPlanner({
          planning: inner,
          announcements,
          notifyBeforeMs: NOTIFY_BEFORE,
        }).plan(),
    });
  }

  const later = (ms: number) => {
    clock = new Date(clock.getTime() + ms);
  };

  it('tells the owners of orphans already past their grace when the entity opts in, deletes nothing, and prunes them notifyBefore later', async () => {
    // First seen ten days ago, before anyone opted in: past a 7d grace at once.
    const longOrphaned = planOf(
      group('orders', {
        eligible: [claim('orders', 1, -72), claim('orders', 2, -72)],
      }),
    );
    const { task, jobs, sent } = announcing(longOrphaned);

    await task.run();
    expect(jobs.started).toEqual([]);
    expect(sent).toHaveLength(1);
    expect(sent[0].payload.title).toMatch(
      /^2 claims of orders will be pruned on .+ UTC unless you keep them$/,
    );
    expect(sent[0].payload.description).toContain(
      `eligible on ${formatWhen(iso(48))}`,
    );

    later(NOTIFY_BEFORE - 60_000);
    await task.run();
    expect(jobs.started).toEqual([]);

    later(60_000);
    await task.run();
    expect(jobs.realPrunes).toHaveLength(1);
    expect(jobs.realPrunes[0].pvcs.map(p => p.name)).toEqual([
      'data-orders-1',
      'data-orders-2',
    ]);
  });

  it('announces afresh a claim that left the plan (kept, or its StatefulSet no longer automated) and came back', async () => {
    const planned = planOf(
      group('orders', { eligible: [claim('orders', 1, -72)] }),
    );
    const keptMeanwhile = planOf(
      group('orders', {
        kept: [
          {
            name: 'data-orders-1',
            uid: 'orders-1',
            keep: {
              source: 'annotation',
              reason: 'pvc-pruner.backstage.io/keep=true',
            },
          },
        ],
      }),
    );
    const { task, jobs, sent } = announcing(
      planned,
      keptMeanwhile,
      planned,
      planned,
    );

    await task.run();
    later(NOTIFY_BEFORE);
    await task.run();
    later(60_000);
    await task.run();
    expect(jobs.started).toEqual([]);
    expect(sent).toHaveLength(2);
    expect(sent[1].payload.description).toContain(
      `eligible on ${formatWhen(
        new Date(clock.getTime() + NOTIFY_BEFORE).toISOString(),
      )}`,
    );

    later(NOTIFY_BEFORE);
    await task.run();
    expect(jobs.realPrunes).toHaveLength(1);
  });

  it('tells the owners again, updating the notice, when a claim is announced after a notice of the same StatefulSet and day', async () => {
    const { task, sent } = announcing(
      planOf(group('orders', { upcoming: [claim('orders', 0, 40)] })),
      planOf(
        group('orders', {
          upcoming: [claim('orders', 0, 40), claim('orders', 1, 40)],
        }),
      ),
    );

    await task.run();
    later(60_000);
    await task.run();

    expect(sent).toHaveLength(2);
    expect(sent[1].payload.scope).toBe(sent[0].payload.scope);
    expect(sent[1].payload.title).toMatch(/^2 claims of orders will be pruned/);
  });
});
