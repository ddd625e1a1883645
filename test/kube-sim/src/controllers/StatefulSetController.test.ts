import { KubeObject } from '../types';
import {
  firstIndex,
  Harness,
  isEvent,
  markedDeleted,
  pvc,
  startHarness,
  statefulSet,
  updateSpec,
  waitFor,
} from './testUtils';

const SETS = 'apps/statefulsets';

describe('StatefulSetController', () => {
  let h: Harness;
  afterEach(() => h.stop());

  const get = (resource: string, name: string) =>
    h.store.get(resource, 'default', name);
  const names = (resource: string) =>
    h.store
      .list(resource, { namespace: 'default' })
      .items.map(o => o.metadata.name)
      .sort();
  const readyReplicas = (name: string, n: number) => () => {
    const set = get(SETS, name);
    return (
      (set?.status?.readyReplicas ?? 0) === n &&
      set?.status?.replicas === n &&
      set
    );
  };

  it('creates each claim before its pod, named and labelled as Kubernetes does', async () => {
    h = startHarness();
    const created = h.store.create(SETS, statefulSet('web'));
    const set = await waitFor(readyReplicas('web', 3), '3 ready replicas');

    expect(names('pods')).toEqual(['web-0', 'web-1', 'web-2']);
    expect(names('persistentvolumeclaims')).toEqual([
      'data-web-0',
      'data-web-1',
      'data-web-2',
    ]);
    for (const ordinal of [0, 1, 2]) {
      const claimAdded = firstIndex(
        h.log,
        isEvent('persistentvolumeclaims', 'ADDED', `data-web-${ordinal}`),
      );
      const podAdded = firstIndex(
        h.log,
        isEvent('pods', 'ADDED', `web-${ordinal}`),
      );
      expect(claimAdded).toBeGreaterThanOrEqual(0);
      expect(claimAdded).toBeLessThan(podAdded);
    }

    const pod = get('pods', 'web-1')!;
    expect(pod.metadata.generateName).toBe('web-');
    expect(pod.metadata.labels).toEqual({
      app: 'web',
      tier: 'db',
      'statefulset.kubernetes.io/pod-name': 'web-1',
      'apps.kubernetes.io/pod-index': '1',
      'controller-revision-hash': set.status.updateRevision,
    });
    expect(set.status.updateRevision).toMatch(
      /^web-[bcdfghjklmnpqrstvwxz2456789]+$/,
    );
    expect(pod.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        name: 'web',
        uid: created.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(pod.spec.volumes).toEqual([
      { name: 'data', persistentVolumeClaim: { claimName: 'data-web-1' } },
    ]);
    expect(pod.spec).toMatchObject({
      hostname: 'web-1',
      subdomain: 'web',
      nodeName: 'sim-node-1',
    });
    expect(pod.status).toMatchObject({
      phase: 'Running',
      podIP: expect.stringMatching(/^10\.244\./),
    });

    const claim = get('persistentvolumeclaims', 'data-web-1')!;
    expect(claim.metadata.labels).toEqual({ app: 'web' });
    expect(claim.metadata.ownerReferences).toBeUndefined();
    expect(claim.spec).toMatchObject({
      storageClassName: 'standard',
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
    });
    expect(claim.status.phase).toBe('Bound');

    expect(set.status).toEqual({
      observedGeneration: 1,
      replicas: 3,
      readyReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      availableReplicas: 3,
      currentRevision: set.status.updateRevision,
      updateRevision: set.status.updateRevision,
      collisionCount: 0,
    });

    const events = h.store.list('events', { namespace: 'default' }).items;
    const messages = events.map(e => e.message);
    expect(messages).toContain(
      'create Pod web-0 in StatefulSet web successful',
    );
    expect(messages).toContain(
      'create Claim data-web-2 Pod web-2 in StatefulSet web success',
    );
    const event = events.find(
      e => e.message === 'create Pod web-0 in StatefulSet web successful',
    )!;
    expect(event).toMatchObject({
      reason: 'SuccessfulCreate',
      type: 'Normal',
      count: 1,
      source: { component: 'statefulset-controller' },
      involvedObject: {
        kind: 'StatefulSet',
        name: 'web',
        namespace: 'default',
        uid: created.metadata.uid,
        apiVersion: 'apps/v1',
      },
    });
    await waitFor(() => h.controllers.idle(), 'controllers idle');
  });

  it('OrderedReady creates a pod only once its predecessor is Running and Ready', async () => {
    h = startHarness();
    h.store.create(SETS, statefulSet('web'));
    await waitFor(readyReplicas('web', 3), '3 ready replicas');
    for (const ordinal of [1, 2]) {
      const predecessorReady = firstIndex(
        h.log,
        e =>
          e.resource === 'pods' &&
          e.object.metadata.name === `web-${ordinal - 1}` &&
          e.object.status?.phase === 'Running',
      );
      expect(predecessorReady).toBeGreaterThanOrEqual(0);
      expect(
        firstIndex(h.log, isEvent('pods', 'ADDED', `web-${ordinal}`)),
      ).toBeGreaterThan(predecessorReady);
    }
  });

  it('Parallel creates all pods without waiting', async () => {
    h = startHarness();
    h.store.create(
      SETS,
      statefulSet('web', { podManagementPolicy: 'Parallel' }),
    );
    await waitFor(readyReplicas('web', 3), '3 ready replicas');
    const firstRunning = firstIndex(
      h.log,
      e => e.resource === 'pods' && e.object.status?.phase === 'Running',
    );
    for (const ordinal of [0, 1, 2]) {
      expect(
        firstIndex(h.log, isEvent('pods', 'ADDED', `web-${ordinal}`)),
      ).toBeLessThan(firstRunning);
    }
  });

  it('scales down from the highest ordinal, one pod at a time, and keeps the claims', async () => {
    h = startHarness();
    h.store.create(SETS, statefulSet('web', { template: template(100) }));
    await waitFor(readyReplicas('web', 3), '3 ready replicas');
    updateSpec(h.store, SETS, 'web', spec => {
      spec.replicas = 1;
    });
    await waitFor(readyReplicas('web', 1), 'one replica');

    const web2Marked = firstIndex(h.log, markedDeleted('pods', 'web-2'));
    const web2Gone = firstIndex(h.log, isEvent('pods', 'DELETED', 'web-2'));
    const web1Marked = firstIndex(h.log, markedDeleted('pods', 'web-1'));
    expect(web2Marked).toBeGreaterThanOrEqual(0);
    expect(web2Gone).toBeGreaterThan(web2Marked);
    expect(web1Marked).toBeGreaterThan(web2Gone);
    expect(names('pods')).toEqual(['web-0']);
    expect(names('persistentvolumeclaims')).toEqual([
      'data-web-0',
      'data-web-1',
      'data-web-2',
    ]);
    expect(get('persistentvolumeclaims', 'data-web-2')!.status.phase).toBe(
      'Bound',
    );
    const messages = h.store
      .list('events', { namespace: 'default' })
      .items.map(e => e.message);
    expect(messages).toContain(
      'delete Pod web-2 in StatefulSet web successful',
    );
  });

  it('Parallel scale-down terminates all condemned pods at once', async () => {
    h = startHarness();
    h.store.create(
      SETS,
      statefulSet('web', {
        podManagementPolicy: 'Parallel',
        template: template(100),
      }),
    );
    await waitFor(readyReplicas('web', 3), '3 ready replicas');
    updateSpec(h.store, SETS, 'web', spec => {
      spec.replicas = 1;
    });
    await waitFor(readyReplicas('web', 1), 'one replica');
    expect(firstIndex(h.log, markedDeleted('pods', 'web-1'))).toBeLessThan(
      firstIndex(h.log, isEvent('pods', 'DELETED', 'web-2')),
    );
  });

  it('uses ordinals.start, and deletes pods left below a raised start', async () => {
    h = startHarness();
    h.store.create(
      SETS,
      statefulSet('web', { replicas: 2, ordinals: { start: 5 } }),
    );
    await waitFor(readyReplicas('web', 2), '2 ready replicas');
    expect(names('pods')).toEqual(['web-5', 'web-6']);
    expect(names('persistentvolumeclaims')).toEqual([
      'data-web-5',
      'data-web-6',
    ]);
    expect(
      get('pods', 'web-5')!.metadata.labels!['apps.kubernetes.io/pod-index'],
    ).toBe('5');

    updateSpec(h.store, SETS, 'web', spec => {
      spec.ordinals = { start: 6 };
    });
    await waitFor(
      () => names('pods').join() === 'web-6,web-7' && readyReplicas('web', 2)(),
      'web-6 and web-7',
    );
    expect(names('persistentvolumeclaims')).toEqual([
      'data-web-5',
      'data-web-6',
      'data-web-7',
    ]);
  });

  it('recreates a pod that disappears', async () => {
    h = startHarness();
    h.store.create(SETS, statefulSet('web', { replicas: 2 }));
    await waitFor(readyReplicas('web', 2), '2 ready replicas');
    const old = get('pods', 'web-1')!;
    h.store.delete('pods', 'default', 'web-1', { gracePeriodSeconds: 0 });
    const replacement = await waitFor(() => {
      const p = get('pods', 'web-1');
      return (
        p &&
        p.metadata.uid !== old.metadata.uid &&
        p.status?.phase === 'Running' &&
        p
      );
    }, 'a new web-1');
    expect(replacement.spec.volumes[0].persistentVolumeClaim.claimName).toBe(
      'data-web-1',
    );
    expect(get('persistentvolumeclaims', 'data-web-1')!.metadata.uid).toBe(
      h.log.find(isEvent('persistentvolumeclaims', 'ADDED', 'data-web-1'))!
        .object.metadata.uid,
    );
  });

  it('whenScaled=Delete hands scaled-down claims to their pods, so they go with them', async () => {
    h = startHarness();
    h.store.create(
      SETS,
      statefulSet('web', {
        persistentVolumeClaimRetentionPolicy: {
          whenScaled: 'Delete',
          whenDeleted: 'Retain',
        },
      }),
    );
    await waitFor(readyReplicas('web', 3), '3 ready replicas');
    const web2 = get('pods', 'web-2')!;
    const volume = get('persistentvolumeclaims', 'data-web-2')!.spec.volumeName;
    updateSpec(h.store, SETS, 'web', spec => {
      spec.replicas = 1;
    });
    await waitFor(
      () => names('persistentvolumeclaims').join() === 'data-web-0',
      'scaled-down claims deleted',
    );

    const handedOver = h.log.find(
      e =>
        e.resource === 'persistentvolumeclaims' &&
        e.object.metadata.name === 'data-web-2' &&
        !!e.object.metadata.ownerReferences,
    )!;
    expect(handedOver.object.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'v1',
        kind: 'Pod',
        name: 'web-2',
        uid: web2.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(
      firstIndex(
        h.log,
        isEvent('persistentvolumeclaims', 'DELETED', 'data-web-2'),
      ),
    ).toBeGreaterThan(firstIndex(h.log, isEvent('pods', 'DELETED', 'web-2')));
    expect(
      get('persistentvolumeclaims', 'data-web-0')!.metadata.ownerReferences,
    ).toBeUndefined();
    await waitFor(
      () => !h.store.get('persistentvolumes', undefined, volume),
      'the Delete volume reclaimed',
    );
  });

  it('whenDeleted=Delete makes the set own the claims, and Retain takes that back', async () => {
    h = startHarness();
    const set = h.store.create(
      SETS,
      statefulSet('web', {
        replicas: 2,
        persistentVolumeClaimRetentionPolicy: {
          whenDeleted: 'Delete',
          whenScaled: 'Retain',
        },
      }),
    );
    await waitFor(readyReplicas('web', 2), '2 ready replicas');
    expect(
      get('persistentvolumeclaims', 'data-web-0')!.metadata.ownerReferences,
    ).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        name: 'web',
        uid: set.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);

    updateSpec(h.store, SETS, 'web', spec => {
      spec.persistentVolumeClaimRetentionPolicy = {
        whenDeleted: 'Retain',
        whenScaled: 'Retain',
      };
    });
    await waitFor(
      () =>
        !get('persistentvolumeclaims', 'data-web-1')!.metadata.ownerReferences,
      'refs removed',
    );

    updateSpec(h.store, SETS, 'web', spec => {
      spec.persistentVolumeClaimRetentionPolicy = {
        whenDeleted: 'Delete',
        whenScaled: 'Retain',
      };
    });
    await waitFor(
      () =>
        get('persistentvolumeclaims', 'data-web-1')!.metadata.ownerReferences,
      'refs restored',
    );
    h.store.delete(SETS, 'default', 'web');
    await waitFor(
      () =>
        names('persistentvolumeclaims').length === 0 &&
        names('pods').length === 0,
      'pods and claims deleted',
    );
  });

  // What the card tells the owners of a paused StatefulSet about retiring it.
  it('whenDeleted=Delete set once a StatefulSet runs no pods marks no claim, so deleting it leaves them; set while its pods ran, they go with it', async () => {
    h = startHarness();
    const policy = (whenDeleted: string) => ({
      persistentVolumeClaimRetentionPolicy: {
        whenDeleted,
        whenScaled: 'Retain',
      },
    });
    h.store.create(SETS, statefulSet('late', { replicas: 2 }));
    h.store.create(
      SETS,
      statefulSet('early', { replicas: 2, ...policy('Delete') }),
    );
    await waitFor(readyReplicas('late', 2), 'late ready');
    await waitFor(readyReplicas('early', 2), 'early ready');
    for (const name of ['late', 'early'])
      updateSpec(h.store, SETS, name, spec => {
        spec.replicas = 0;
      });
    await waitFor(() => names('pods').length === 0, 'both paused');
    updateSpec(h.store, SETS, 'late', spec => {
      Object.assign(spec, policy('Delete'));
    });
    // The controller has seen the new policy, with no pod to apply it to.
    await waitFor(
      () =>
        get(SETS, 'late')?.status?.observedGeneration ===
        get(SETS, 'late')?.metadata.generation,
      'late observed',
    );

    h.store.delete(SETS, 'default', 'late');
    h.store.delete(SETS, 'default', 'early');
    await waitFor(
      () =>
        names('persistentvolumeclaims').join() === 'data-late-0,data-late-1',
      "early's claims deleted",
    );
    await new Promise(r => setTimeout(r, 200));
    expect(names('persistentvolumeclaims')).toEqual([
      'data-late-0',
      'data-late-1',
    ]);
    expect(
      get('persistentvolumeclaims', 'data-late-0')!.metadata.ownerReferences,
    ).toBeUndefined();
  });

  it('keeps the revision when a client reorders the same template', async () => {
    h = startHarness();
    h.store.create(SETS, statefulSet('web', { replicas: 1 }));
    const before = await waitFor(readyReplicas('web', 1), 'ready');
    const reordered = structuredClone(before);
    const { metadata, spec } = reordered.spec.template;
    reordered.spec.template = { spec, metadata };
    h.store.update(SETS, reordered);
    await waitFor(() => h.controllers.idle(), 'controllers idle');
    expect(get(SETS, 'web')!.status.updateRevision).toBe(
      before.status.updateRevision,
    );
    expect(firstIndex(h.log, markedDeleted('pods', 'web-0'))).toBe(-1);
  });

  it('rolls a template change out from the highest ordinal', async () => {
    h = startHarness();
    h.store.create(SETS, statefulSet('web'));
    const before = await waitFor(readyReplicas('web', 3), '3 ready replicas');
    updateSpec(h.store, SETS, 'web', spec => {
      spec.template.spec.containers[0].image = 'nginx:1.28';
    });
    const after = await waitFor(() => {
      const set = readyReplicas('web', 3)();
      const done =
        set &&
        set.status.updateRevision !== before.status.updateRevision &&
        set.status.currentRevision === set.status.updateRevision;
      return done && set.status.updatedReplicas === 3 && set;
    }, 'the update to complete');
    expect(after.status.observedGeneration).toBe(2);
    expect(get('pods', 'web-0')!.spec.containers[0].image).toBe('nginx:1.28');
    expect(firstIndex(h.log, markedDeleted('pods', 'web-2'))).toBeLessThan(
      firstIndex(h.log, markedDeleted('pods', 'web-1')),
    );
  });

  it('does not create a pod while its claim is being deleted', async () => {
    h = startHarness();
    h.store.create(SETS, statefulSet('web', { replicas: 0 }));
    h.store.create('persistentvolumeclaims', {
      ...pvc('data-web-0'),
      metadata: {
        name: 'data-web-0',
        namespace: 'default',
        finalizers: ['example.com/hold'],
      },
    } as KubeObject);
    h.store.delete('persistentvolumeclaims', 'default', 'data-web-0');
    const doomed = get('persistentvolumeclaims', 'data-web-0')!;
    updateSpec(h.store, SETS, 'web', spec => {
      spec.replicas = 1;
    });
    const warning = await waitFor(
      () =>
        h.store
          .list('events', { namespace: 'default' })
          .items.find(e => e.reason === 'FailedCreate'),
      'a FailedCreate event',
    );
    expect(warning).toMatchObject({
      type: 'Warning',
      message:
        'create Pod web-0 in StatefulSet web failed error: pvc data-web-0 is being deleted',
    });
    expect(get('pods', 'web-0')).toBeUndefined();

    const held = get('persistentvolumeclaims', 'data-web-0')!;
    h.store.update('persistentvolumeclaims', {
      ...held,
      metadata: {
        ...held.metadata,
        finalizers: held.metadata.finalizers!.filter(
          f => f !== 'example.com/hold',
        ),
      },
    });
    await waitFor(readyReplicas('web', 1), 'web-0 ready');
    expect(get('persistentvolumeclaims', 'data-web-0')!.metadata.uid).not.toBe(
      doomed.metadata.uid,
    );
  });
});

/** The default pod template with a grace period (simulated seconds). */
function template(terminationGracePeriodSeconds: number) {
  return {
    metadata: { labels: { app: 'web', tier: 'db' } },
    spec: {
      terminationGracePeriodSeconds,
      containers: [{ name: 'main', image: 'nginx:1.27' }],
    },
  };
}
