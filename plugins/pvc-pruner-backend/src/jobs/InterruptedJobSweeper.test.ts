import { mockServices } from '@backstage/backend-test-utils';
import { PruneJobStore } from '../database';
import {
  createWebJob,
  startMemoryJobStore,
} from '../__testUtils__/memoryJobStore';
import {
  INTERRUPTED_REASON,
  InterruptedJobSweeper,
  SWEEP_TASK_ID,
} from './InterruptedJobSweeper';

/* The sweep on Backstage's scheduler, over a real (SQLite) job store. */

let closeStore: () => Promise<void>;
let store: PruneJobStore;

beforeEach(async () => {
  ({ store, close: closeStore } = await startMemoryJobStore());
});

afterEach(async () => {
  await closeStore();
});

const job = () => createWebJob(store, [{ name: 'data-web-1', uid: 'u1' }]);

describe('InterruptedJobSweeper', () => {
  it('runs once across replicas (a global scheduler task) every lease duration', async () => {
    const scheduler = mockServices.scheduler.mock();

    await InterruptedJobSweeper.schedule({
      scheduler,
      store,
      logger: mockServices.logger.mock(),
      staleAfterMs: 30_000,
    });

    expect(scheduler.scheduleTask).toHaveBeenCalledTimes(1);
    expect(scheduler.scheduleTask).toHaveBeenCalledWith(
      expect.objectContaining({
        id: SWEEP_TASK_ID,
        scope: 'global',
        frequency: { milliseconds: 30_000 },
      }),
    );
  });

  it('marks a job whose heartbeat stopped as interrupted when the scheduler runs it, and leaves a live one alone', async () => {
    const scheduler = mockServices.scheduler.mock();
    const logger = mockServices.logger.mock();
    const dead = await job();
    await store.claim(dead.id, 'replica-dead');
    await new Promise(r => setTimeout(r, 300));
    const live = await job();
    await store.claim(live.id, 'replica-live');
    await InterruptedJobSweeper.schedule({
      scheduler,
      store,
      logger,
      staleAfterMs: 200,
    });
    const { fn } = scheduler.scheduleTask.mock.calls[0][0];

    await fn(new AbortController().signal);

    expect(await store.getJob(dead.id)).toMatchObject({
      status: 'interrupted',
      reason: INTERRUPTED_REASON,
    });
    expect((await store.getJob(live.id))?.status).toBe('queued');
    expect(logger.warn).toHaveBeenCalledWith(
      `pvc-pruner: job ${dead.id} (shop/web) was interrupted`,
    );
  });
});
