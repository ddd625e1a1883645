import { DatabaseService } from '@backstage/backend-plugin-api';
import { mockServices } from '@backstage/backend-test-utils';
import knexFactory, { Knex } from 'knex';
import { ClaimKeepStore } from '../automation/ClaimKeepStore';
import { ClaimLineageStore } from '../lineage';
import { AnnouncementStore } from '../automation/AnnouncementStore';
import { AutoPruneRunStore } from '../automation/AutoPruneRunStore';
import { OrphanSightingStore } from './OrphanSightingStore';
import { PruneJobStore } from './PruneJobStore';
import { RETENTION_TASK_ID, RetentionCleaner } from './RetentionCleaner';

/* The clean-up on Backstage's scheduler, over real (SQLite) stores on one test clock. */

const DAY = 24 * 60 * 60_000;
const T0 = new Date('2026-01-01T00:00:00.000Z');
const days = (n: number) => new Date(T0.getTime() + n * DAY);

let knex: Knex;
let clock: Date;
let jobs: PruneJobStore;
let sightings: OrphanSightingStore;
let lineage: ClaimLineageStore;
let keeps: ClaimKeepStore;
let autoPruneRuns: AutoPruneRunStore;

beforeEach(async () => {
  knex = knexFactory({
    client: 'better-sqlite3',
    connection: ':memory:',
    useNullAsDefault: true,
  });
  const database = {
    getClient: async () => knex,
    migrations: { skip: false },
  } as DatabaseService;
  clock = T0;
  jobs = await PruneJobStore.create({ database, now: () => clock });
  sightings = await OrphanSightingStore.create({ database, now: () => clock });
  lineage = await ClaimLineageStore.create({ database, now: () => clock });
  keeps = await ClaimKeepStore.create({ database, now: () => clock });
  autoPruneRuns = await AutoPruneRunStore.create({
    database,
    now: () => clock,
    schedule: { frequency: { hours: 1 }, timeout: { minutes: 30 } },
  });
});

afterEach(async () => {
  await knex.destroy();
});

const newJob = () =>
  jobs.createJob({
    entityRef: 'component:default/web',
    cluster: 'demo',
    namespace: 'shop',
    statefulSet: 'web',
    dryRun: true,
    requestedBy: 'user:default/alice',
    pvcs: [{ name: 'data-web-1', uid: 'u1' }],
  });

describe('RetentionCleaner', () => {
  it('runs once a day across replicas (a global scheduler task)', async () => {
    const scheduler = mockServices.scheduler.mock();

    await RetentionCleaner.schedule({
      scheduler,
      jobs,
      sightings,
      lineage,
      logger: mockServices.logger.mock(),
      retentionDays: 90,
    });

    expect(scheduler.scheduleTask).toHaveBeenCalledWith(
      expect.objectContaining({
        id: RETENTION_TASK_ID,
        scope: 'global',
        frequency: { hours: 24 },
      }),
    );
  });

  it('deletes finished jobs, their events, unseen sightings, unseen lineage, ended keeps, deleting marks and automatic runs older than retentionDays when the scheduler runs it, and keeps a running job and fresh lineage', async () => {
    const scheduler = mockServices.scheduler.mock();
    const logger = mockServices.logger.mock();
    const done = await newJob();
    await jobs.updateJob(done.id, {
      status: 'succeeded',
      finishedAt: T0.toISOString(),
    });
    const running = await newJob();
    await jobs.updateJob(running.id, { status: 'running' });
    await sightings.record([
      { uid: 'u1', cluster: 'demo', namespace: 'shop', name: 'data-web-1' },
    ]);
    const lineageOf = (claimUid: string) => ({
      cluster: 'demo',
      namespace: 'shop',
      claimUid,
      statefulSet: { name: 'web', uid: 'sts-1' },
      template: 'data',
      ordinal: 1,
      claimants: ['component:default/web'],
      claimantUids: { 'component:default/web': 'uid-web' },
    });
    await lineage.record([lineageOf('old'), lineageOf('old-still-claimed')]);
    const oldRun = await autoPruneRuns.startRun();
    await autoPruneRuns.finishRun(oldRun.id, {
      status: 'finished',
      considered: 1,
      eligible: 1,
      deleted: 1,
      kept: 0,
      bytesDeleted: 1,
    });
    clock = days(20);
    await lineage.record([lineageOf('fresh')]);
    clock = T0;
    const keepOf = (claimUid: string, until?: Date) => ({
      cluster: 'demo',
      namespace: 'shop',
      claimName: 'data-web-1',
      claimUid,
      entityRef: 'component:default/web',
      reason: 'export',
      keptBy: 'user:default/alice',
      ...(until ? { until: until.toISOString() } : {}),
    });
    await keeps.keep(keepOf('ended', days(0.5)));
    await keeps.keep(keepOf('open'));
    await keeps.markDeleting('demo', 'deleted-long-ago', 'job-1');
    await RetentionCleaner.schedule({
      scheduler,
      jobs,
      sightings,
      lineage,
      keeps,
      referenced: {
        snapshot: async () => () => new Set(['old-still-claimed']),
      },
      autoPruneRuns,
      logger,
      retentionDays: 30,
    });
    const { fn } = scheduler.scheduleTask.mock.calls[0][0];

    clock = days(31);
    await fn(new AbortController().signal);

    expect(await jobs.getJob(done.id)).toBeUndefined();
    expect(await jobs.listEvents(done.id)).toEqual([]);
    expect((await jobs.getJob(running.id))?.status).toBe('running');
    expect(await knex('pvc_pruner_orphan_sightings')).toEqual([]);
    expect(
      (await knex('pvc_pruner_claim_lineage').select('claim_uid')).map(
        r => r.claim_uid,
      ),
    ).toEqual(expect.arrayContaining(['fresh', 'old-still-claimed']));
    expect(await knex('pvc_pruner_claim_lineage')).toHaveLength(2);
    expect(await autoPruneRuns.getRun(oldRun.id)).toBeUndefined();
    expect(
      (await knex('pvc_pruner_claim_keeps').select('uid')).map(r => r.uid),
    ).toEqual(['open']);
    expect(await knex('pvc_pruner_claim_deleting')).toEqual([]);
    expect(logger.info).toHaveBeenCalledWith(
      'pvc-pruner: deleted 1 finished prune jobs (with their events), 1 orphan sightings, the lineage of 1 claims, 1 ended claim keeps, 1 automatic deleting marks and 1 automatic runs older than 30 days (pvcPruner.retentionDays)',
    );
  });
});

describe('RetentionCleaner and automatic pruning announcements', () => {
  it('deletes the announcements no run has planned for retentionDays, and keeps the recent', async () => {
    const database = {
      getClient: async () => knex,
      migrations: { skip: false },
    } as DatabaseService;
    const announcements = await AnnouncementStore.create({
      database,
      now: () => clock,
    });
    const scheduler = mockServices.scheduler.mock();
    const logger = mockServices.logger.mock();
    await announcements.announce([{ cluster: 'gone', uid: 'old' }], []);
    clock = days(20);
    // A run that could not read cluster "gone" keeps its announcement.
    await announcements.announce(
      [{ cluster: 'demo', uid: 'recent' }],
      ['gone'],
    );
    await RetentionCleaner.schedule({
      scheduler,
      jobs,
      sightings,
      lineage,
      announcements,
      logger,
      retentionDays: 30,
    });
    const { fn } = scheduler.scheduleTask.mock.calls[0][0];

    clock = days(31);
    await fn(new AbortController().signal);

    expect(
      (await announcements.announcementsOf('gone', ['old'])).announcedAt,
    ).toEqual(new Map());
    expect(
      (await announcements.announcementsOf('demo', ['recent'])).announcedAt,
    ).toEqual(new Map([['recent', days(20).toISOString()]]));
    expect(logger.info).toHaveBeenCalledWith(
      expect.stringContaining(
        '(and 1 announcements of claims to automatic pruning)',
      ),
    );
  });
});
