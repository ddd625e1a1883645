import type { KubeObject, KubeSim } from 'kube-sim';
import type { PruneJob } from 'backstage-plugin-pvc-pruner-common';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import { startMemoryJobStore } from '../__testUtils__/memoryJobStore';
import { PruneJobStore } from '../database';
import { KubeGateway } from '../kubernetes';
import { JobEvents, LeaseLock, VolumeFollower } from '../jobs';
import type { HeldLease } from '../jobs/LeaseLock';
import { releasedVolume as releasedOne } from '../__testUtils__/releasedVolume';
import { SeenVolume, VolumeReclaimRunner } from './VolumeReclaimRunner';
import { reclaimLeaseName } from './VolumeReclaimJobs';

/* VolumeReclaimRunner against the simulator (no controllers: nothing reclaims a volume by itself) and an in-memory job store. */

let sim: KubeSim;
let gateway: KubeGateway;
let store: PruneJobStore;
let closeStore: () => Promise<void>;

const VOLUMES = 'persistentvolumes';
let counter = 0;

/** A Released volume of a deleted claim of shop, dynamically provisioned unless told. */
function releasedVolume(options: { provisionedBy?: string | null } = {}) {
  return releasedOne(sim, `pvc-${++counter}`, options);
}

const seenOf = (pv: KubeObject): SeenVolume => ({
  name: pv.metadata.name,
  uid: pv.metadata.uid,
  resourceVersion: pv.metadata.resourceVersion,
  claimUid: pv.spec.claimRef.uid,
  claimNamespace: 'shop',
});

const volumePatches = () =>
  sim.requests().filter(r => r.method === 'PATCH' && r.resource === VOLUMES);

function newJob(volumes: KubeObject[], dryRun = false): Promise<PruneJob> {
  return store.createJob({
    kind: 'reclaim',
    cluster: 'demo',
    namespace: 'shop',
    statefulSet: 'web',
    dryRun,
    requestedBy: 'user:default/alice',
    pvcs: volumes.map(v => ({ name: v.metadata.name, uid: v.metadata.uid })),
  });
}

async function run(
  volumes: KubeObject[],
  options: {
    dryRun?: boolean;
    lease?: (held: HeldLease) => HeldLease;
    /** Called with the job and its events before it runs. */
    watch?: (job: PruneJob, events: JobEvents) => void;
    follower?: VolumeFollower;
    followForMs?: number;
  } = {},
) {
  const job = await newJob(volumes, options.dryRun);
  const held = await new LeaseLock({
    leaseDurationSeconds: 30,
    holderPrefix: 'backstage-a',
    clock: store,
  }).acquire(gateway, {
    namespace: 'shop',
    statefulSet: '',
    leaseName: reclaimLeaseName('shop'),
    jobId: job.id,
    requestedBy: 'user:default/alice',
    dryRun: Boolean(options.dryRun),
  });
  const events = new JobEvents(store);
  options.watch?.(job, events);
  const result = await new VolumeReclaimRunner(
    store,
    events,
    options.follower ?? new VolumeFollower(300),
    { renewIntervalMs: 60_000, followForMs: options.followForMs },
  ).run(
    job,
    gateway,
    options.lease ? options.lease(held) : held,
    volumes.map(seenOf),
    new AbortController().signal,
  );
  return { job, result };
}

beforeAll(async () => {
  ({ sim, gateway } = await startShopSimulator());
});
afterAll(() => sim.close());
beforeEach(async () => {
  ({ store, close: closeStore } = await startMemoryJobStore());
  sim.clearRequests();
});
afterEach(() => closeStore());

describe('VolumeReclaimRunner', () => {
  it('patches the reclaim policy to Delete with the resourceVersion seen, and follows the volume until it is gone', async () => {
    const pv = releasedVolume();
    const deleting = new Promise<void>(resolve => {
      const timer = setInterval(() => {
        if (
          sim.store.get(VOLUMES, undefined, pv.metadata.name)?.spec
            .persistentVolumeReclaimPolicy === 'Delete'
        ) {
          clearInterval(timer);
          // The provisioner's part, which this simulator runs without (pv-protection let go too).
          const last = structuredClone(
            sim.store.get(VOLUMES, undefined, pv.metadata.name)!,
          );
          last.metadata.finalizers = [];
          sim.store.update(VOLUMES, last);
          sim.store.delete(VOLUMES, undefined, pv.metadata.name);
          resolve();
        }
      }, 5);
    });
    const { result } = await run([pv]);
    await deleting;

    expect(result.status).toBe('succeeded');
    expect(result.summary.deleted.map(d => d.name)).toEqual([pv.metadata.name]);
    expect(result.summary.bytesReclaimed).toBe(10 * 2 ** 30);
    expect(volumePatches()).toHaveLength(1);
    // The Lease is released once the job has ended.
    expect(
      sim.store.get(
        'coordination.k8s.io/leases',
        'shop',
        reclaimLeaseName('shop'),
      ),
    ).toBeUndefined();
  });

  it('does not patch a volume that changed since it was seen, nor one Bound again', async () => {
    const changed = releasedVolume();
    const bumped = structuredClone(changed);
    bumped.metadata.labels = { touched: 'yes' };
    sim.store.update(VOLUMES, bumped);
    const rebound = releasedVolume();
    const bound = structuredClone(rebound);
    bound.status = { phase: 'Bound' };
    sim.store.update(VOLUMES, bound);

    const { result } = await run([changed, rebound]);

    expect(volumePatches()).toEqual([]);
    expect(result.summary.skipped.map(s => s.reason)).toEqual([
      expect.stringContaining('it changed since it was listed'),
      'it is Bound, not Released to a claim',
    ]);
  });

  it('carries the resourceVersion to the API server: a change between its check and its patch is refused there, and the volume skipped', async () => {
    const pv = releasedVolume();
    // The volume changes in the instant the patch leaves (the lease's last word before sending it).
    const { result } = await run([pv], {
      lease: held => ({
        ...held,
        renew: () => held.renew(),
        confirm: () => held.confirm(),
        release: () => held.release(),
        isFresh: () => {
          const now = structuredClone(
            sim.store.get(VOLUMES, undefined, pv.metadata.name)!,
          );
          now.metadata.labels = { raced: 'yes' };
          sim.store.update(VOLUMES, now);
          return held.isFresh();
        },
      }),
    });

    expect(volumePatches().map(p => p.status)).toEqual([409]);
    expect(result.summary.skipped[0].reason).toContain(
      'it changed after it was checked',
    );
    expect(
      sim.store.get(VOLUMES, undefined, pv.metadata.name)!.spec
        .persistentVolumeReclaimPolicy,
    ).toBe('Retain');
  });

  it('never patches a statically provisioned volume', async () => {
    const pv = releasedVolume({ provisionedBy: null });
    const { result } = await run([pv]);
    expect(volumePatches()).toEqual([]);
    expect(result.summary.skipped[0].reason).toContain(
      'deleting the PersistentVolume object would leave the disk',
    );
  });

  it('a dry run patches with dryRun=All and changes nothing', async () => {
    const pv = releasedVolume();
    const { result } = await run([pv], { dryRun: true });
    expect(result.status).toBe('succeeded');
    expect(volumePatches().map(p => p.query)).toEqual([
      expect.stringContaining('dryRun=All'),
    ]);
    expect(
      sim.store.get(VOLUMES, undefined, pv.metadata.name)!.metadata
        .resourceVersion,
    ).toBe(pv.metadata.resourceVersion);
  });

  it('says why a volume its provisioner could not delete went Failed', async () => {
    const pv = releasedVolume();
    const failing = setInterval(() => {
      const now = sim.store.get(VOLUMES, undefined, pv.metadata.name);
      if (now?.spec.persistentVolumeReclaimPolicy !== 'Delete') return;
      clearInterval(failing);
      sim.store.update(VOLUMES, {
        ...structuredClone(now),
        status: { phase: 'Failed', message: 'disk vol-1 is attached' },
      });
    }, 5);
    const { result } = await run([pv]);
    expect(result.status).toBe('failed');
    expect(result.summary.failed[0].reason).toBe(
      'its provisioner could not delete it, and it went Failed: disk vol-1 is attached',
    );
  });

  it('reports a patch the cluster refused as failed, the volume left as it was', async () => {
    const pv = releasedVolume();
    sim.addFault({ verb: 'patch', resource: VOLUMES, status: 503, times: 1 });
    const { result } = await run([pv]);
    expect(result.status).toBe('failed');
    expect(result.summary.failed[0].reason).toContain(
      `refused patch persistentvolume ${pv.metadata.name}: 503`,
    );
    expect(
      sim.store.get(VOLUMES, undefined, pv.metadata.name)!.spec
        .persistentVolumeReclaimPolicy,
    ).toBe('Retain');
  });

  describe('when another replica ended the job, taking this one for dead', () => {
    const reason = 'The Backstage instance running this job stopped';
    /** Another replica's sweep, as the first volume is reclaimed. */
    const sweepAtFirstVolume = (job: PruneJob, events: JobEvents) => {
      let swept: Promise<unknown> | undefined;
      events.subscribe(job.id, event => {
        if (event.type === 'volume-reclaiming')
          swept ??= store.markInterrupted({ staleAfterMs: -60_000, reason });
      });
    };

    it('reclaims no further volume, and leaves the job as it was ended', async () => {
      const [first, second] = [releasedVolume(), releasedVolume()];
      const { job, result } = await run([first, second], {
        watch: sweepAtFirstVolume,
      });

      expect(result.status).toBe('interrupted');
      expect(volumePatches().map(r => r.path.split('/').pop())).toEqual([
        first.metadata.name,
      ]);
      const stored = await store.getJob(job.id);
      expect(stored).toMatchObject({ status: 'interrupted', reason });
      expect(stored?.summary?.skipped).toEqual([
        expect.objectContaining({
          name: second.metadata.name,
          reason: 'not attempted: the job was ended elsewhere (interrupted)',
        }),
      ]);
      const finished = (await store.listEvents(job.id)).filter(
        e => e.type === 'job-finished',
      );
      expect(finished).toEqual([
        expect.objectContaining({ status: 'interrupted', message: reason }),
      ]);
    });

    it('keeps that ending when it was written while the last volume was reclaimed', async () => {
      const pv = releasedVolume();
      const { job, result } = await run([pv], { watch: sweepAtFirstVolume });

      expect(result.status).toBe('interrupted');
      const stored = await store.getJob(job.id);
      expect(stored).toMatchObject({ status: 'interrupted', reason });
      // What this run did before it noticed is kept.
      expect(stored?.summary?.terminating.map(o => o.name)).toEqual([
        pv.metadata.name,
      ]);
    });
  });
});

describe('VolumeReclaimRunner, following', () => {
  it('follows the patched volumes together under one deadline, after releasing the Lease, not one wait per volume while holding it', async () => {
    // No provisioner runs here: each volume stays, set to Delete.
    const volumes = [releasedVolume(), releasedVolume(), releasedVolume()];
    const started = performance.now();
    const { result } = await run(volumes, {
      follower: new VolumeFollower(5_000),
      followForMs: 400,
    });
    const took = performance.now() - started;

    expect(result.status).toBe('incomplete');
    expect(result.summary.terminating.map(o => o.name).sort()).toEqual(
      volumes.map(v => v.metadata.name).sort(),
    );
    // One deadline for the three, far below one per-volume wait, let alone three.
    expect(took).toBeLessThan(3_000);
    const leaseDeleted = sim
      .requests()
      .findIndex(r => r.method === 'DELETE' && r.resource === 'leases');
    const lastPatch = sim
      .requests()
      .map(r => r.method === 'PATCH' && r.resource === VOLUMES)
      .lastIndexOf(true);
    expect(leaseDeleted).toBeGreaterThan(lastPatch);
    expect(
      sim
        .requests()
        .slice(leaseDeleted)
        .some(r => r.method === 'PATCH'),
    ).toBe(false);
  });
});
