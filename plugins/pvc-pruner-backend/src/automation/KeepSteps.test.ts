import { mockCredentials } from '@backstage/backend-test-utils';
import type { PruneJob } from 'backstage-plugin-pvc-pruner-common';
import { KEEP_CLAIM_ANNOTATION } from 'backstage-plugin-pvc-pruner-common';
import { KubeSim, statefulSet } from 'kube-sim';
import {
  annotateKept,
  claimExists,
  createUnusedClaims,
  removeShopClaims,
} from '../__testUtils__/shopClaims';
import { FencedClaimKeeps } from '../__testUtils__/fencedClaimKeeps';
import {
  createWebJob,
  startMemoryJobStore,
} from '../__testUtils__/memoryJobStore';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import { PruneJobStore } from '../database';
import {
  JobEvents,
  JobRequest,
  LeaseLock,
  PruneRunner,
  VolumeFollower,
} from '../jobs';
import { KubeGateway } from '../kubernetes';
import { KeepSteps } from './KeepSteps';

/* KeepSteps in a real PruneRunner against the simulator (no controllers). */

let sim: KubeSim;
let gateway: KubeGateway;
let store: PruneJobStore;
let closeStore: () => Promise<void>;
let keeps: FencedClaimKeeps;

const LEASES = 'coordination.k8s.io/leases';

beforeAll(async () => {
  ({ sim, gateway } = await startShopSimulator());
  sim.store.create(
    'apps/statefulsets',
    statefulSet('web', { replicas: 1 }, 'shop'),
  );
});

afterAll(async () => {
  await sim.close();
});

beforeEach(async () => {
  ({ store, close: closeStore } = await startMemoryJobStore());
  keeps = new FencedClaimKeeps();
});

afterEach(async () => {
  removeShopClaims(sim);
  if (sim.store.get(LEASES, 'shop', 'pvc-pruner-web'))
    sim.store.delete(LEASES, 'shop', 'pvc-pruner-web', {});
  await closeStore();
});

const createClaims = (names: string[]) => createUnusedClaims(sim, names);
const annotate = (name: string) => annotateKept(sim, name);
const exists = (name: string) => claimExists(sim, name);

const automatic: JobRequest = {
  credentials: mockCredentials.service('plugin:pvc-pruner'),
  automatic: { runId: 'run-1', onBehalfOf: 'component:default/web' },
};

async function run(job: PruneJob, request: JobRequest = automatic) {
  const lease = await new LeaseLock({
    leaseDurationSeconds: 30,
    holderPrefix: 'backstage-a',
    clock: store,
  }).acquire(gateway, {
    namespace: 'shop',
    statefulSet: 'web',
    jobId: job.id,
    requestedBy: job.requestedBy,
    dryRun: job.dryRun,
  });
  const runner = new PruneRunner(
    store,
    new JobEvents(store),
    new VolumeFollower(500),
    { renewIntervalMs: 60_000 },
    [],
    [new KeepSteps(keeps)],
  );
  return runner.run(job, gateway, lease, undefined, request);
}

const newJob = (pvcs: Array<{ name: string; uid: string }>, dryRun = false) =>
  createWebJob(store, pvcs, { requestedBy: 'plugin:pvc-pruner', dryRun });

describe('KeepSteps', () => {
  it('holds back a claim kept through the card, saying who kept it, when and why, and deletes the others', async () => {
    const [kept, other] = createClaims(['data-web-1', 'data-web-2']);
    keeps.keep(kept.uid);

    const result = await run(await newJob([kept, other]));

    expect(exists('data-web-1')).toBe(true);
    expect(exists('data-web-2')).toBe(false);
    // Held before anything was done to it: never marked as being deleted.
    expect([...keeps.marks.keys()]).toEqual([other.uid]);
    expect(result.status).toBe('incomplete');
    expect(result.summary.skipped).toEqual([
      expect.objectContaining({
        name: 'data-web-1',
        reason:
          'kept by user:default/alice on 3 Dec: still needed for the migration',
      }),
    ]);
  });

  it('holds back a claim annotated as kept after the job began, as the live check before its delete reads it', async () => {
    const [claim] = createClaims(['data-web-1']);
    // The annotation lands while the job prepares: after the job read anything else of the claim.
    keeps.onKeepsOf = () => annotate('data-web-1');

    const result = await run(await newJob([claim]));

    expect(exists('data-web-1')).toBe(true);
    expect(result.summary.skipped[0].reason).toBe(
      `kept from automatic pruning: annotated ${KEEP_CLAIM_ANNOTATION}=true`,
    );
  });

  it('does not delete a claim annotated right after its last check: the annotation changed it, and the delete is preconditioned on the version checked', async () => {
    const [claim] = createClaims(['data-web-1']);
    keeps.beforeFence = call => {
      if (call === 'keptNow') annotate('data-web-1');
    };

    const result = await run(await newJob([claim]));

    expect(exists('data-web-1')).toBe(true);
    expect(result.summary.deleted).toEqual([]);
    expect(result.summary.skipped[0].reason).toMatch(
      /^it changed after it was checked/,
    );
  });

  describe('the fence with a keep made through the card at the instant of the delete', () => {
    it('sees a keep stored just before the job marks the claim, and does not delete it', async () => {
      const [claim] = createClaims(['data-web-1']);
      keeps.beforeFence = (_call, uid) => {
        // The job's first fence call: it has not marked the claim yet.
        if (keeps.calls.length === 1) keeps.keep(uid);
      };

      const result = await run(await newJob([claim]));

      expect(keeps.acknowledged.has(claim.uid)).toBe(true);
      expect(exists('data-web-1')).toBe(true);
      expect(result.summary.skipped[0].reason).toMatch(
        /^kept by user:default\/alice on 3 Dec/,
      );
    });

    it('has a keep asked for between its two fence calls refused, never acknowledged and then deleted', async () => {
      const [claim] = createClaims(['data-web-1']);
      let answer: string | undefined;
      keeps.beforeFence = (_call, uid) => {
        // The second fence call: the job has made its first.
        if (keeps.calls.length === 2) answer = keeps.keep(uid);
      };

      await run(await newJob([claim]));

      expect(answer).toBe('refused');
      expect(keeps.acknowledged.has(claim.uid)).toBe(false);
      expect(keeps.calls).toEqual(['keepsOf', 'markDeleting', 'keptNow']);
      expect(exists('data-web-1')).toBe(false);
    });
  });

  it('leaves no deleting mark for a dry run, which deletes nothing, but still reports the keep', async () => {
    const [claim, kept] = createClaims(['data-web-1', 'data-web-2']);
    // Kept once the dry run has prepared: its last check finds it.
    keeps.beforeFence = (_call, uid) => {
      if (uid === kept.uid && !keeps.keeps.has(uid)) keeps.keep(uid);
    };

    const result = await run(await newJob([claim, kept], true));

    expect(keeps.marks.size).toBe(0);
    expect(result.summary.deleted.map(c => c.name)).toEqual(['data-web-1']);
    expect(result.summary.skipped.map(c => c.name)).toEqual(['data-web-2']);
  });

  it('is not part of a prune a person asked for', async () => {
    const [claim] = createClaims(['data-web-1']);
    keeps.keep(claim.uid);

    await run(await newJob([claim]), {
      credentials: mockCredentials.user('user:default/bob'),
    });

    expect(keeps.calls).toEqual([]);
    expect(exists('data-web-1')).toBe(false);
  });
});
