import type { KubeSim } from 'kube-sim';
import {
  claimOf,
  component,
  grantsOf,
  reclaim,
  reclaimRequest,
  releasedVolumesOf,
  SEARCH_REF,
  volumeOf,
  ORDERS_DB_ORPHANS,
  pruneAll,
  permissionOf,
  Pruner,
  rbacRules,
  startPruner,
  startSim,
  statefulSetIn,
  waitFor,
} from './__testUtils__/harness';

jest.setTimeout(30000);

describe('the service account of rbac/pvc-pruner-rbac.yaml', () => {
  let sim: KubeSim;
  let pruner: Pruner;

  afterEach(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  it('grants exactly what a scan, a dry run, a prune and a reclaim use: every verb is needed, none is refused', async () => {
    const rules = rbacRules();
    // Volumes are reclaimed 1 s after their claim goes, so the plugin follows them with a watch.
    sim = await startSim([], { reclaimSeconds: 50 });
    const token = sim.addToken({
      user: 'system:serviceaccount:backstage:pvc-pruner',
      rules,
    });
    // The namespace binding is on, so its rule (get namespaces) is used too.
    for (const name of ['shop', 'search']) {
      const namespace = structuredClone(
        sim.store.require('namespaces', undefined, name),
      );
      namespace.metadata.annotations = {
        'backstage.io/owner': 'group:default/team-a',
      };
      sim.store.update('namespaces', namespace);
    }
    // Renewed every 333 ms, so a prune renews its lease at least once.
    pruner = await startPruner({
      sim,
      token,
      entities: [component('orders'), component('search', 'search-index')],
      pvcPruner: {
        leaseDurationSeconds: 1,
        ownership: { namespaceOwnerAnnotation: 'backstage.io/owner' },
      },
    });

    const sts = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');
    expect(sts.orphans.map(o => o.name).sort()).toEqual(ORDERS_DB_ORPHANS);
    expect(
      (await pruner.waitForJob(await pruner.prune(pruneAll(sts, true)))).status,
    ).toBe('succeeded');
    ORDERS_DB_ORPHANS.forEach(name =>
      expect(claimOf(sim, 'shop', name)).toBeDefined(),
    );

    // Hold the controllers while the first deletion lands, so the plugin must watch the claim go.
    sim.pauseControllers();
    const id = await pruner.prune(pruneAll(sts));
    await waitFor('the first claim deletion', () =>
      sim
        .requests()
        .some(
          r => r.method === 'DELETE' && r.resource === 'persistentvolumeclaims',
        ),
    );
    await new Promise(r => setTimeout(r, 100));
    sim.resumeControllers();
    const job = await pruner.waitForJob(id);
    expect(job.status).toBe('succeeded');
    expect(job.summary.deleted.map(d => d.name).sort()).toEqual(
      ORDERS_DB_ORPHANS,
    );
    expect(job.summary.deleted.every(d => d.volume?.fate === 'deleted')).toBe(
      true,
    );
    ORDERS_DB_ORPHANS.forEach(name =>
      expect(claimOf(sim, 'shop', name)).toBeUndefined(),
    );

    // The lease is released just after the job's final status is stored.
    await waitFor('the lease to be released', () =>
      sim.requests().some(r => r.verb === 'delete' && r.resource === 'leases'),
    );

    // search-index's claims are on Retain volumes: pruned, their volumes are Released, then reclaimed.
    const search = statefulSetIn(
      await pruner.scan(SEARCH_REF),
      'search',
      'search-index',
    );
    const pruned = await pruner.waitForJob(
      await pruner.prune(pruneAll(search, false, SEARCH_REF)),
    );
    expect(pruned.status).toBe('succeeded');
    const volumes = await releasedVolumesOf(pruner, SEARCH_REF, 2);
    const reclaimed = await pruner.waitForJob(
      await reclaim(pruner, reclaimRequest(volumes, SEARCH_REF)),
    );
    expect(reclaimed.status).toBe('succeeded');
    volumes.forEach(v => expect(volumeOf(sim, v.name)).toBeUndefined());

    const mine = sim
      .requests()
      .filter(r => r.user === 'system:serviceaccount:backstage:pvc-pruner');
    expect(mine.filter(r => r.status === 401 || r.status === 403)).toEqual([]);
    const used = new Set(mine.map(permissionOf));
    // No rule is unused (nothing extra), and nothing used is outside the rules.
    expect([...used].sort()).toEqual([...grantsOf(rules)].sort());
    // StatefulSets are listed both across namespaces (the scan) and in one (the prune's ownership check).
    const stsLists = mine
      .filter(r => r.verb === 'list' && r.resource === 'statefulsets')
      .map(r => r.path);
    expect(stsLists).toEqual(
      expect.arrayContaining([
        '/apis/apps/v1/statefulsets',
        '/apis/apps/v1/namespaces/shop/statefulsets',
      ]),
    );
  });

  it('without delete on persistentvolumeclaims, a prune reports each claim failed instead of crashing', async () => {
    const rules = rbacRules().map(r =>
      r.resources?.includes('persistentvolumeclaims')
        ? { ...r, verbs: r.verbs.filter(v => v !== 'delete') }
        : r,
    );
    sim = await startSim();
    const token = sim.addToken({
      user: 'system:serviceaccount:backstage:pvc-pruner',
      rules,
    });
    pruner = await startPruner({ sim, token });

    const sts = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');
    const job = await pruner.waitForJob(await pruner.prune(pruneAll(sts)));

    expect(job.status).toBe('failed');
    expect(job.reason).toBe('5 claim(s) could not be deleted');
    expect(job.summary.deleted).toEqual([]);
    expect(job.summary.failed.map(f => f.name).sort()).toEqual(
      ORDERS_DB_ORPHANS,
    );
    for (const failure of job.summary.failed) {
      expect(failure.reason).toContain(
        `cluster "demo" refused delete persistentvolumeclaim shop/${failure.name}: 403 Forbidden`,
      );
    }
    ORDERS_DB_ORPHANS.forEach(name =>
      expect(claimOf(sim, 'shop', name)).toBeDefined(),
    );
    const events = await pruner.events(job.id);
    expect(events.filter(e => e.type === 'pvc-failed')).toHaveLength(5);
    expect(events[events.length - 1]).toMatchObject({
      type: 'job-finished',
      status: 'failed',
    });
    // The lease was still taken and released, and the backend still answers.
    expect(
      sim.store.get(
        'coordination.k8s.io/leases',
        'shop',
        'pvc-pruner-orders-db',
      ),
    ).toBeUndefined();
    expect(
      statefulSetIn(await pruner.scan(), 'shop', 'orders-db').orphans,
    ).toHaveLength(5);
  });

  it('without patch on persistentvolumes, a reclaim reports each volume failed and changes nothing', async () => {
    const rules = rbacRules().map(r =>
      r.resources?.includes('persistentvolumes')
        ? { ...r, verbs: r.verbs.filter(v => v !== 'patch') }
        : r,
    );
    sim = await startSim();
    const token = sim.addToken({
      user: 'system:serviceaccount:backstage:pvc-pruner',
      rules,
    });
    pruner = await startPruner({
      sim,
      token,
      entities: [component('search', 'search-index')],
    });
    const search = statefulSetIn(
      await pruner.scan(SEARCH_REF),
      'search',
      'search-index',
    );
    await pruner.waitForJob(
      await pruner.prune(pruneAll(search, false, SEARCH_REF)),
    );
    const volumes = await releasedVolumesOf(pruner, SEARCH_REF, 2);

    const job = await pruner.waitForJob(
      await reclaim(pruner, reclaimRequest(volumes, SEARCH_REF)),
    );

    expect(job.status).toBe('failed');
    expect(job.summary.failed.map(f => f.reason)).toEqual(
      volumes.map(v =>
        expect.stringContaining(
          `cluster "demo" refused patch persistentvolume ${v.name}: 403 Forbidden`,
        ),
      ),
    );
    volumes.forEach(v =>
      expect(volumeOf(sim, v.name)!.spec.persistentVolumeReclaimPolicy).toBe(
        'Retain',
      ),
    );
  });

  it('with an older binding that cannot read HorizontalPodAutoscalers, keeps every claim an autoscaler could bring back and offers none', async () => {
    const rules = rbacRules().filter(
      r => !r.resources?.includes('horizontalpodautoscalers'),
    );
    sim = await startSim();
    const token = sim.addToken({
      user: 'system:serviceaccount:backstage:pvc-pruner',
      rules,
    });
    pruner = await startPruner({ sim, token });

    const sts = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');

    expect(sts.orphans).toEqual([]);
    const unknown = sts.kept.filter(k => k.reason !== 'not-an-ordinal');
    expect(unknown.map(k => k.name).sort()).toEqual(ORDERS_DB_ORPHANS);
    for (const kept of unknown) {
      expect(kept.reason).toBe('autoscalers-unreadable');
      expect(kept.autoscalersError).toMatch(
        /^cluster "demo" refused list \S*horizontalpodautoscalers( in shop)?: 403 Forbidden/,
      );
    }
  });
});
