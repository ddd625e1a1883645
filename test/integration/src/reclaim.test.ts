import type { KubeSim } from 'kube-sim';
import type {
  ReclaimRequest,
  ReleasedVolume,
  ReleasedVolumesResponse,
} from 'backstage-plugin-pvc-pruner-common';
import {
  ALICE,
  aliceDenied,
  BOB,
  claimOf,
  component,
  kubectl,
  pruneAll,
  Pruner,
  reclaimRequest,
  releasedVolumesOf,
  SEARCH_REF,
  PrunerOptions,
  startPruner,
  startSim,
  statefulSetIn,
  volumeOf,
  waitFor,
  writesTo,
} from './__testUtils__/harness';

jest.setTimeout(30000);

/** The demo's search/search-index: claims of ordinals 2 and 3 left behind, on premium-retain (Retain) volumes. */
const SEARCH_ORPHANS = ['data-search-index-2', 'data-search-index-3'];
const GI100 = 100 * 2 ** 30;

/** Volume PATCHes the simulator received (dry runs included). */
function volumePatches(sim: KubeSim) {
  return writesTo(sim).filter(
    r => r.method === 'PATCH' && r.resource === 'persistentvolumes',
  );
}

/** The volume names `kubectl get pv` lists. */
async function listedVolumes(sim: KubeSim): Promise<string[]> {
  return JSON.parse(await kubectl(sim, ['get', 'pv', '-o', 'json'])).items.map(
    (pv: any) => pv.metadata.name,
  );
}

describe('reclaiming Released volumes, judged from the simulator', () => {
  let sim: KubeSim;
  let pruner: Pruner;

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  /** Prunes search-index's left-behind claims: their Retain volumes are Released. Returns the volumes' names. */
  async function pruneSearchIndex(options: Partial<PrunerOptions> = {}) {
    sim = await startSim([], { recordHistory: true });
    pruner = await startPruner({
      sim,
      entities: [component('search', 'search-index')],
      ...options,
    });
    const sts = statefulSetIn(
      await pruner.scan(SEARCH_REF),
      'search',
      'search-index',
    );
    expect(sts.orphans.map(o => o.name).sort()).toEqual(SEARCH_ORPHANS);
    const job = await pruner.waitForJob(
      await pruner.prune(pruneAll(sts, false, SEARCH_REF), BOB),
    );
    expect(job.status).toBe('succeeded');
    const volumes = job.summary.deleted.map(d => d.volume!.name).sort();
    volumes.forEach(v =>
      expect(volumeOf(sim, v)!.status.phase).toBe('Released'),
    );
    return volumes;
  }

  async function released(user?: string, entityRef = SEARCH_REF) {
    const res = await pruner.get<ReleasedVolumesResponse>(
      `/v1/released-volumes${
        entityRef ? `?entityRef=${encodeURIComponent(entityRef)}` : ''
      }`,
      user,
    );
    expect(res.status).toBe(200);
    return res.body;
  }

  /** The entity's Released volumes, once the plugin lists all of `names`. */
  const listedReleased = (names: string[], user?: string) =>
    releasedVolumesOf(pruner, SEARCH_REF, names.length, user);

  const reclaimOf = (
    volumes: ReleasedVolume[],
    more: Partial<ReclaimRequest> = {},
  ) => reclaimRequest(volumes, SEARCH_REF, more);

  it('lists the Released volumes of pruned claims under their entity, and reclaims them: the policy is patched, then the provisioner deletes them', async () => {
    const names = await pruneSearchIndex();
    const items = await listedReleased(names);
    expect(items.map(v => v.name).sort()).toEqual(names);
    for (const v of items) {
      expect(v).toMatchObject({
        bytes: GI100,
        storageClass: 'premium-retain',
        reclaimPolicy: 'Retain',
        statefulSet: { name: 'search-index' },
        entityRef: SEARCH_REF,
        claimants: [SEARCH_REF],
        reclaimable: true,
        canReclaim: true,
      });
      expect(Date.parse(v.releasedSince!)).not.toBeNaN();
      expect(SEARCH_ORPHANS).toContain(v.claim.name);
    }
    sim.clearRequests();

    const res = await pruner.post('/v1/reclaim-jobs', reclaimOf(items), BOB);
    expect(res.status).toBe(202);
    const job = await pruner.waitForJob(res.body.id);

    expect(job.status).toBe('succeeded');
    expect(job.kind).toBe('reclaim');
    expect(job.entityRef).toBe(SEARCH_REF);
    expect(job.summary.deleted.map(d => d.name).sort()).toEqual(names);
    expect(job.summary.bytesReclaimed).toBe(2 * GI100);
    names.forEach(n => expect(volumeOf(sim, n)).toBeUndefined());
    const listed = await listedVolumes(sim);
    names.forEach(n => expect(listed).not.toContain(n));
    // Each deletion was the provisioner's, after our patch of a Released volume to its own claim uid.
    const deletions = sim
      .history!.volumeDeletions()
      .filter(d => names.includes(d.name));
    expect(deletions).toHaveLength(2);
    for (const d of deletions) {
      expect(d.by).toBe('controller');
      expect(d.policyChange).toMatchObject({
        from: 'Retain',
        to: 'Delete',
        phase: 'Released',
        claimUid: items.find(v => v.name === d.name)!.claim.uid,
      });
      expect(d.policyChange!.at).toBeLessThanOrEqual(d.at);
    }
    expect(volumePatches(sim)).toHaveLength(2);
    // The job is in the entity's history, its events streamed like a prune's.
    const history = await pruner.get(
      `/v1/prune-jobs?entityRef=${encodeURIComponent(SEARCH_REF)}`,
    );
    expect(history.body.items[0].id).toBe(job.id);
    const events = await pruner.events(job.id);
    expect(events.map(e => e.type)).toEqual(
      expect.arrayContaining([
        'job-queued',
        'lease-acquired',
        'volume-reclaiming',
        'volume-deleted',
        'job-finished',
      ]),
    );
    // Nothing left to list.
    await waitFor(
      'the reclaimed volumes to leave the list',
      async () => (await released()).items.length === 0,
    );
  });

  it("reclaims the volumes of a namespace that was deleted: the Lease lives in the namespace the plugin is configured with, not the claims' own", async () => {
    const names = await pruneSearchIndex();
    // Deleting a team's namespace is how Released Retain volumes usually come about;
    // the API server then refuses to create anything in it, the reclaim Lease included.
    await kubectl(sim, ['delete', 'namespace', 'search', '--timeout=20s']);
    expect(sim.store.get('namespaces', undefined, 'search')).toBeUndefined();
    expect(claimOf(sim, 'search', 'data-search-index-0')).toBeUndefined();
    const items = (await listedReleased(names)).filter(v =>
      names.includes(v.name),
    );
    expect(items.map(v => v.name).sort()).toEqual(names);
    sim.clearRequests();

    const res = await pruner.post('/v1/reclaim-jobs', reclaimOf(items), BOB);
    expect(res.status).toBe(202);
    const job = await pruner.waitForJob(res.body.id);

    expect(job.status).toBe('succeeded');
    names.forEach(n => expect(volumeOf(sim, n)).toBeUndefined());
    const leaseWrites = writesTo(sim).filter(r => r.resource === 'leases');
    expect(leaseWrites.length).toBeGreaterThan(0);
    leaseWrites.forEach(r =>
      expect(r.path).toContain(
        '/apis/coordination.k8s.io/v1/namespaces/default/leases',
      ),
    );
  });

  it('a dry run changes nothing: every patch carries dryRun=All', async () => {
    const names = await pruneSearchIndex();
    const items = await listedReleased(names);
    const before = names.map(n => volumeOf(sim, n)!.metadata.resourceVersion);
    sim.clearRequests();

    const res = await pruner.post(
      '/v1/reclaim-jobs',
      reclaimOf(items, { dryRun: true }),
      BOB,
    );
    expect(res.status).toBe(202);
    const job = await pruner.waitForJob(res.body.id);

    expect(job.status).toBe('succeeded');
    expect(job.dryRun).toBe(true);
    expect(job.summary.deleted.map(d => d.name).sort()).toEqual(names);
    const patches = volumePatches(sim);
    expect(patches).toHaveLength(2);
    patches.forEach(p => expect(p.query).toContain('dryRun=All'));
    expect(names.map(n => volumeOf(sim, n)!.metadata.resourceVersion)).toEqual(
      before,
    );
    names.forEach(n =>
      expect(volumeOf(sim, n)!.spec.persistentVolumeReclaimPolicy).toBe(
        'Retain',
      ),
    );
  });

  it('does not touch a volume that changed between the list and the reclaim: a new resourceVersion, re-bound to another claim uid, or Bound again', async () => {
    const names = await pruneSearchIndex();
    const items = await listedReleased(names);
    const [first, second] = items;

    // The first volume changes (a label added): its resourceVersion moves on.
    const changed = structuredClone(volumeOf(sim, first.name)!);
    changed.metadata.labels = { touched: 'yes' };
    sim.store.update('persistentvolumes', changed);
    // The second is re-bound: its claimRef now names another claim uid, and it is Bound.
    sim.pauseControllers();
    const rebound = structuredClone(volumeOf(sim, second.name)!);
    rebound.spec.claimRef = { ...rebound.spec.claimRef, uid: 'another-claim' };
    rebound.status = { phase: 'Bound' };
    sim.store.update('persistentvolumes', rebound);
    sim.clearRequests();

    for (const volume of [first, second]) {
      const res = await pruner.post(
        '/v1/reclaim-jobs',
        reclaimOf([volume]),
        BOB,
      );
      expect(res.status).toBe(409);
    }
    expect(volumePatches(sim)).toEqual([]);
    expect(volumeOf(sim, first.name)).toBeDefined();
    expect(volumeOf(sim, second.name)!.spec.persistentVolumeReclaimPolicy).toBe(
      'Retain',
    );
    sim.resumeControllers();
  });

  it('lists a statically provisioned Released volume with the reason, offers no reclaim, and refuses a crafted one with 400', async () => {
    const names = await pruneSearchIndex();
    const items = await listedReleased(names);
    // A statically provisioned Released volume: no provisioned-by annotation.
    const staticPv = structuredClone(volumeOf(sim, items[0].name)!);
    delete staticPv.metadata.annotations!['pv.kubernetes.io/provisioned-by'];
    sim.store.update('persistentvolumes', staticPv);

    const listed = await waitFor('the static volume listed as such', async () =>
      (
        await released()
      ).items.find(v => v.name === items[0].name && !v.reclaimable),
    );
    expect(listed.canReclaim).toBe(false);
    expect(listed.reason).toContain(
      'deleting the PersistentVolume object would leave the disk',
    );
    sim.clearRequests();
    const crafted = await pruner.post(
      '/v1/reclaim-jobs',
      reclaimOf([listed]),
      BOB,
    );
    expect(crafted.status).toBe(400);
    expect(crafted.body.error.message).toContain('statically provisioned');
    expect(volumePatches(sim)).toEqual([]);
    expect(claimOf(sim, 'search', listed.claim.name)).toBeUndefined();
  });

  it('refuses, with 403 and nothing patched, a user without pvc-pruner.volumes.reclaim on an entity the volume is traced to', async () => {
    const permissions = aliceDenied('pvc-pruner.volumes.reclaim');
    const names = await pruneSearchIndex({ features: [permissions.factory] });
    const items = await listedReleased(names, ALICE);
    items.forEach(v => {
      expect(v.canReclaim).toBe(false);
      expect(v.reason).toContain('pvc-pruner.volumes.reclaim');
    });
    sim.clearRequests();

    const res = await pruner.post('/v1/reclaim-jobs', reclaimOf(items), ALICE);

    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain(SEARCH_REF);
    expect(volumePatches(sim)).toEqual([]);
    names.forEach(n =>
      expect(volumeOf(sim, n)!.spec.persistentVolumeReclaimPolicy).toBe(
        'Retain',
      ),
    );
  });

  it('lists a volume no entity can be traced to on the fleet page only, and reclaims it only for a holder of pvc-pruner.unowned.prune', async () => {
    const UNOWNED = 'pvc-0d5e1a7c-released-before-the-demo';
    const permissions = aliceDenied('pvc-pruner.unowned.prune');
    sim = await startSim([], { recordHistory: true });
    pruner = await startPruner({
      sim,
      entities: [component('search', 'search-index')],
      features: [permissions.factory],
    });
    // The demo's volume whose claim was deleted before pvc-pruner ever saw it.
    const fleet = await waitFor(
      'the unowned volume on the fleet page',
      async () => {
        const { items } = await released(ALICE, '');
        return items.find(v => v.name === UNOWNED);
      },
    );
    expect(fleet).toMatchObject({
      claim: { namespace: 'shop', name: 'data-orders-db-7' },
      claimants: [],
      reclaimable: true,
      canReclaim: false,
      bytes: 50 * 2 ** 30,
    });
    expect(fleet.entityRef).toBeUndefined();
    expect(fleet.reason).toContain('pvc-pruner.unowned.prune');
    expect((await released(BOB)).items.map(v => v.name)).not.toContain(UNOWNED);
    sim.clearRequests();

    const refused = await pruner.post(
      '/v1/reclaim-jobs',
      reclaimRequest([fleet]),
      ALICE,
    );
    expect(refused.status).toBe(403);
    expect(volumePatches(sim)).toEqual([]);

    const job = await pruner.waitForJob(
      (
        await pruner.post('/v1/reclaim-jobs', reclaimRequest([fleet]), BOB)
      ).body.id,
    );
    expect(job.status).toBe('succeeded');
    expect(job.entityRef).toBeUndefined();
    expect(volumeOf(sim, UNOWNED)).toBeUndefined();
    // An unowned job is read with pvc-pruner.fleet.unowned.read, as an unowned prune is.
    expect((await pruner.get(`/v1/prune-jobs/${job.id}`, BOB)).status).toBe(
      200,
    );
  });

  it("with the namespace binding on, refuses a reclaim once the claims' Namespace no longer names the entity's owner", async () => {
    const annotate = (owner: string) => {
      const search = structuredClone(
        sim.store.require('namespaces', undefined, 'search'),
      );
      search.metadata.annotations = { 'backstage.io/owner': owner };
      sim.store.update('namespaces', search);
    };
    sim = await startSim([], { recordHistory: true });
    annotate('group:default/team-a');
    pruner = await startPruner({
      sim,
      entities: [component('search', 'search-index')],
      pvcPruner: {
        ownership: { namespaceOwnerAnnotation: 'backstage.io/owner' },
      },
    });
    const sts = statefulSetIn(
      await pruner.scan(SEARCH_REF),
      'search',
      'search-index',
    );
    await pruner.waitForJob(
      await pruner.prune(pruneAll(sts, false, SEARCH_REF), BOB),
    );
    const items = await releasedVolumesOf(pruner, SEARCH_REF, 2);
    annotate('group:default/team-b');
    sim.clearRequests();

    const res = await pruner.post('/v1/reclaim-jobs', reclaimOf(items), BOB);

    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain(
      'Namespace search names group:default/team-b',
    );
    expect(volumePatches(sim)).toEqual([]);
  });
});
