import {
  horizontalPodAutoscaler,
  KubeObject,
  KubeSim,
  manifest,
  pvc,
  startKubeSim,
  statefulSet,
} from './index';

describe('ApiHistory', () => {
  let sim: KubeSim;
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${sim.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${sim.token}`,
        'Content-Type':
          method === 'PATCH'
            ? 'application/merge-patch+json'
            : 'application/json',
        'User-Agent': 'history-test/1',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  beforeEach(async () => {
    sim = await startKubeSim({ controllers: false, recordHistory: true });
    sim.store.create('apps/statefulsets', statefulSet('web', { replicas: 2 }));
    for (const name of ['data-web-0', 'data-web-1', 'data-web-3', 'data-web-4'])
      sim.store.create('persistentvolumeclaims', pvc(name));
    sim.store.create(
      'pods',
      manifest({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'backup', namespace: 'default' },
        spec: {
          containers: [{ name: 'c', image: 'busybox' }],
          volumes: [
            { name: 'v', persistentVolumeClaim: { claimName: 'data-web-4' } },
          ],
        },
      }),
    );
  });

  afterEach(() => sim.close());

  /** A Retain volume whose claimRef names `claim` (by namespace, name and uid). */
  const retainVolumeOf = (name: string, claim: KubeObject) =>
    sim.store.create(
      'persistentvolumes',
      manifest({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          claimRef: {
            namespace: claim.metadata.namespace,
            name: claim.metadata.name,
            uid: claim.metadata.uid,
          },
        },
      }),
    );

  it('records each claim deletion with the state it met: running ordinals, mounting pods, preconditions', async () => {
    const claims = '/api/v1/namespaces/default/persistentvolumeclaims';
    const uid3 = sim.store.get(
      'persistentvolumeclaims',
      'default',
      'data-web-3',
    )!.metadata.uid;
    expect((await call('DELETE', `${claims}/data-web-1`)).ok).toBe(true);
    expect(
      (
        await call('DELETE', `${claims}/data-web-3`, {
          preconditions: { uid: uid3 },
        })
      ).ok,
    ).toBe(true);
    expect((await call('DELETE', `${claims}/data-web-4`)).ok).toBe(true);
    expect((await call('DELETE', `${claims}/data-web-9`)).status).toBe(404);

    const [running, orphan, mounted, missing] = sim.history!.claimDeletions();
    expect(running).toMatchObject({
      request: { name: 'data-web-1', userAgent: 'history-test/1' },
      inUse: true,
      runningOrdinalOf: [{ statefulSet: 'web', ordinal: 1 }],
      pods: [],
    });
    expect(orphan).toMatchObject({
      inUse: false,
      preconditions: { uid: uid3 },
      claim: { uid: uid3, terminating: false },
    });
    expect(orphan.inUseSince).toBeUndefined();
    expect(mounted).toMatchObject({
      inUse: true,
      runningOrdinalOf: [],
      pods: [{ name: 'backup', terminating: false }],
    });
    expect(missing.claim).toBeUndefined();
    expect(missing.request.status).toBe(404);
  });

  it('counts a pod that references the claim through a generic ephemeral volume (named <pod>-<volume>) as mounting it', async () => {
    sim.store.create(
      'pods',
      manifest({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'data-web', namespace: 'default' },
        spec: {
          containers: [{ name: 'c', image: 'busybox' }],
          volumes: [
            { name: '3', ephemeral: { volumeClaimTemplate: { spec: {} } } },
          ],
        },
      }),
    );
    const claims = '/api/v1/namespaces/default/persistentvolumeclaims';
    expect((await call('DELETE', `${claims}/data-web-3`)).ok).toBe(true);
    const [deletion] = sim.history!.claimDeletions();
    expect(deletion).toMatchObject({
      inUse: true,
      pods: [{ name: 'data-web' }],
    });
  });

  it("records the claim's annotations as the delete met it: a keep annotated with a merge patch just before", async () => {
    const claims = '/api/v1/namespaces/default/persistentvolumeclaims';
    const annotate = await call('PATCH', `${claims}/data-web-3`, {
      metadata: { annotations: { 'pvc-pruner.backstage.io/keep': 'true' } },
    });
    expect(annotate.ok).toBe(true);
    expect((await call('DELETE', `${claims}/data-web-3`)).ok).toBe(true);
    expect((await call('DELETE', `${claims}/data-web-1`)).ok).toBe(true);
    const [kept, plain] = sim.history!.claimDeletions();
    expect(kept.claim?.annotations).toEqual({
      'pvc-pruner.backstage.io/keep': 'true',
    });
    expect(plain.claim?.annotations).toEqual({});
  });

  it("records the claim's volume as the delete met it: its reclaim policy and the claim its claimRef names", async () => {
    const claim = sim.store.create(
      'persistentvolumeclaims',
      pvc('data-web-7', { volumeName: 'pv-7' }),
    );
    retainVolumeOf('pv-7', claim);
    const claims = '/api/v1/namespaces/default/persistentvolumeclaims';
    expect((await call('DELETE', `${claims}/data-web-7`)).ok).toBe(true);
    expect((await call('DELETE', `${claims}/data-web-3`)).ok).toBe(true);
    const [bound, unbound] = sim.history!.claimDeletions();
    expect(bound.volume).toEqual({
      name: 'pv-7',
      reclaimPolicy: 'Retain',
      claimUid: claim.metadata.uid,
    });
    expect(unbound.volume).toBeUndefined();
  });

  it('records each volume deletion as the delete met it, by a client or by the reclaimer, with the policy change before it', async () => {
    const volume = (name: string, phase: string, claimUid?: string) => {
      const pv = sim.store.create(
        'persistentvolumes',
        manifest({
          apiVersion: 'v1',
          kind: 'PersistentVolume',
          metadata: {
            name,
            annotations: {
              'pv.kubernetes.io/provisioned-by': 'ebs.csi.aws.com',
            },
          },
          spec: {
            capacity: { storage: '1Gi' },
            accessModes: ['ReadWriteOnce'],
            csi: { driver: 'ebs.csi.aws.com', volumeHandle: `vol-${name}` },
            persistentVolumeReclaimPolicy: 'Retain',
            ...(claimUid
              ? {
                  claimRef: {
                    namespace: 'default',
                    name: 'data-gone-0',
                    uid: claimUid,
                  },
                }
              : {}),
          },
        }),
      );
      return sim.store.update('persistentvolumes', {
        ...pv,
        status: { phase },
      });
    };
    const released = volume('pv-released', 'Released', 'uid-gone');
    const free = volume('pv-free', 'Available');
    const volumes = '/api/v1/persistentvolumes';
    const patched = await call('PATCH', `${volumes}/pv-released`, {
      spec: { persistentVolumeReclaimPolicy: 'Delete' },
    });
    expect(patched.ok).toBe(true);
    // The provisioner (a controller: no request) deletes the Released volume.
    sim.store.delete('persistentvolumes', undefined, 'pv-released', {
      preconditions: { uid: released.metadata.uid },
    });
    expect((await call('DELETE', `${volumes}/pv-free`)).ok).toBe(true);

    const [reclaimed, deleted] = sim.history!.volumeDeletions();
    expect(reclaimed).toEqual({
      at: expect.any(Number),
      name: 'pv-released',
      uid: released.metadata.uid,
      claimRef: { namespace: 'default', name: 'data-gone-0', uid: 'uid-gone' },
      phase: 'Released',
      reclaimPolicy: 'Delete',
      provisionedBy: 'ebs.csi.aws.com',
      finalizers: ['kubernetes.io/pv-protection'],
      by: 'controller',
      policyChange: {
        at: expect.any(Number),
        volume: 'pv-released',
        volumeUid: released.metadata.uid,
        request: expect.objectContaining({
          verb: 'patch',
          resource: 'persistentvolumes',
          name: 'pv-released',
          userAgent: 'history-test/1',
          status: 200,
        }),
        from: 'Retain',
        to: 'Delete',
        phase: 'Released',
        claimUid: 'uid-gone',
        claimRef: {
          namespace: 'default',
          name: 'data-gone-0',
          uid: 'uid-gone',
        },
        claimExists: false,
      },
    });
    // Every change is logged, whether or not a deletion followed.
    expect(sim.history!.reclaimPolicyChanges()).toEqual([
      reclaimed.policyChange,
    ]);
    expect(reclaimed.policyChange!.at).toBeLessThan(reclaimed.at);
    expect(deleted).toMatchObject({
      name: 'pv-free',
      uid: free.metadata.uid,
      phase: 'Available',
      reclaimPolicy: 'Retain',
      by: 'request',
      request: { verb: 'delete', name: 'pv-free', status: 202 },
    });
    expect(deleted.claimRef).toBeUndefined();
    expect(deleted.policyChange).toBeUndefined();
    // Marked only (pv-protection holds them): a second delete records nothing new.
    sim.store.delete('persistentvolumes', undefined, 'pv-free');
    expect(sim.history!.volumeDeletions()).toHaveLength(2);
    sim.history!.clear();
    expect(sim.history!.volumeDeletions()).toEqual([]);
    expect(sim.history!.reclaimPolicyChanges()).toEqual([]);
  });

  it('dates a running ordinal from the scale that brought it into range', async () => {
    const before = performance.timeOrigin + performance.now();
    const scale = await call(
      'PATCH',
      '/apis/apps/v1/namespaces/default/statefulsets/web',
      { spec: { replicas: 4 } },
    );
    expect(scale.status).toBe(200);
    await call(
      'DELETE',
      '/api/v1/namespaces/default/persistentvolumeclaims/data-web-3',
    );
    await call(
      'DELETE',
      '/api/v1/namespaces/default/persistentvolumeclaims/data-web-0',
    );
    const [scaledIn, always] = sim.history!.claimDeletions();
    expect(scaledIn.inUse).toBe(true);
    expect(scaledIn.inUseSince).toBeGreaterThanOrEqual(before);
    expect(always.inUseSince).toBeLessThan(before);
  });

  it('records the StatefulSets with their labels and since when they are paused, each dated from the change that made it so', async () => {
    const sts = '/apis/apps/v1/namespaces/default/statefulsets/web';
    const claims = '/api/v1/namespaces/default/persistentvolumeclaims';
    const before = performance.timeOrigin + performance.now();
    await call('PATCH', sts, { metadata: { labels: { team: 'search' } } });
    await call('DELETE', `${claims}/data-web-3`);
    await call('PATCH', sts, { spec: { replicas: 0 } });
    const paused = performance.timeOrigin + performance.now();
    await call('DELETE', `${claims}/data-web-0`);
    const [running, stopped] = sim.history!.claimDeletions();
    expect(running.statefulSets[0]).toMatchObject({
      labels: { team: 'search' },
      replicas: 2,
    });
    expect(running.statefulSets[0].labelsSince).toBeGreaterThanOrEqual(before);
    expect(running.statefulSets[0].pausedSince).toBeUndefined();
    expect(stopped.statefulSets[0].replicas).toBe(0);
    expect(stopped.statefulSets[0].pausedSince).toBeGreaterThanOrEqual(
      running.request.at,
    );
    expect(stopped.statefulSets[0].pausedSince).toBeLessThanOrEqual(paused);
    // A paused StatefulSet runs no ordinal: its claims are not in use, only paused.
    expect(stopped.inUse).toBe(false);
  });

  it('dates each StatefulSet from when it appeared: one re-created under its name is newer than the one it replaced', async () => {
    const claims = '/api/v1/namespaces/default/persistentvolumeclaims';
    await call('DELETE', `${claims}/data-web-3`);
    const old = sim.store.get('apps/statefulsets', 'default', 'web')!;
    sim.store.delete('apps/statefulsets', 'default', 'web');
    const recreated = performance.timeOrigin + performance.now();
    sim.store.create('apps/statefulsets', statefulSet('web', { replicas: 5 }));
    await call('DELETE', `${claims}/data-web-4`);
    const [first, second] = sim.history!.claimDeletions();
    expect(first.statefulSets[0].uid).toBe(old.metadata.uid);
    expect(first.statefulSets[0].existsSince).toBeLessThan(recreated);
    expect(second.statefulSets[0].uid).not.toBe(old.metadata.uid);
    expect(second.statefulSets[0].existsSince).toBeGreaterThanOrEqual(
      recreated,
    );
    // The new one runs ordinal 4 from when it appeared.
    expect(second.runningOrdinalOf).toEqual([
      {
        statefulSet: 'web',
        ordinal: 4,
        since: second.statefulSets[0].existsSince,
      },
    ]);
  });

  it('logs every change of a reclaim policy, with whether the claim its claimRef names still exists, though no deletion follows', async () => {
    const claim = sim.store.get(
      'persistentvolumeclaims',
      'default',
      'data-web-0',
    )!;
    retainVolumeOf('pv-bound', claim);
    const patched = await call('PATCH', '/api/v1/persistentvolumes/pv-bound', {
      spec: { persistentVolumeReclaimPolicy: 'Delete' },
    });
    expect(patched.ok).toBe(true);
    expect(sim.history!.volumeDeletions()).toEqual([]);
    expect(sim.history!.reclaimPolicyChanges()).toEqual([
      expect.objectContaining({
        volume: 'pv-bound',
        from: 'Retain',
        to: 'Delete',
        claimUid: claim.metadata.uid,
        claimExists: true,
        request: expect.objectContaining({ verb: 'patch', name: 'pv-bound' }),
      }),
    ]);
  });

  it('records the autoscalers whose range covers a deleted claim, dated from when it first did (created or raised)', async () => {
    const hpas =
      '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
    const claims = '/api/v1/namespaces/default/persistentvolumeclaims';
    expect(
      (
        await call(
          'POST',
          hpas,
          horizontalPodAutoscaler('web', 'web', { maxReplicas: 4 }),
        )
      ).status,
    ).toBe(201);
    // A decoy: an HPA of a Deployment named web targets no StatefulSet.
    await call(
      'POST',
      hpas,
      horizontalPodAutoscaler(
        'web-deployment',
        'web',
        { maxReplicas: 9 },
        'default',
        {
          scaleTargetRef: {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: 'web',
          },
        },
      ),
    );
    const created = performance.timeOrigin + performance.now();
    await call('DELETE', `${claims}/data-web-3`);
    await call('DELETE', `${claims}/data-web-4`);
    await call('PATCH', `${hpas}/web`, { spec: { maxReplicas: 6 } });
    const raised = performance.timeOrigin + performance.now();
    sim.store.create('persistentvolumeclaims', pvc('data-web-5'));
    await call('DELETE', `${claims}/data-web-5`);
    const [inRange, beyond, afterRaise] = sim.history!.claimDeletions();
    expect(inRange.autoscaledOrdinalOf).toEqual([
      {
        statefulSet: 'web',
        ordinal: 3,
        autoscaler: 'web',
        maxReplicas: 4,
        since: expect.any(Number),
      },
    ]);
    expect(inRange.autoscaledOrdinalOf[0].since).toBeLessThanOrEqual(created);
    expect(beyond.autoscaledOrdinalOf).toEqual([]);
    expect(afterRaise.autoscaledOrdinalOf).toMatchObject([
      { ordinal: 5, maxReplicas: 6 },
    ]);
    expect(afterRaise.autoscaledOrdinalOf[0].since).toBeGreaterThan(created);
    expect(afterRaise.autoscaledOrdinalOf[0].since).toBeLessThanOrEqual(raised);
  });

  it('tells when a request began to arrive from when the store served it (injected latency in between)', async () => {
    sim.addFault({ verb: 'delete', latencyMs: 80 });
    await call(
      'DELETE',
      '/api/v1/namespaces/default/persistentvolumeclaims/data-web-3',
    );
    const [deletion] = sim.history!.claimDeletions();
    expect(deletion.request.injectedLatencyMs).toBe(80);
    expect(
      deletion.request.at - deletion.request.receivedAt!,
    ).toBeGreaterThanOrEqual(79);
  });

  it('records Lease writes with the Lease before and after', async () => {
    const leases = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'lock' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 5 },
    };
    expect((await call('POST', leases, lease)).status).toBe(201);
    expect((await call('POST', leases, lease)).status).toBe(409);
    expect((await call('DELETE', `${leases}/lock`)).status).toBe(200);
    const [created, refused, deleted] = sim.history!.leaseWrites();
    expect(created.before).toBeUndefined();
    expect(created.after?.spec.holderIdentity).toBe('a');
    expect(refused.request.status).toBe(409);
    expect(refused.before?.spec.holderIdentity).toBe('a');
    expect(deleted.after).toBeUndefined();
  });
});
