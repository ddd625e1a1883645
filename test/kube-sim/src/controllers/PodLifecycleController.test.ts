import {
  eventsAbout,
  firstIndex,
  Harness,
  isEvent,
  manifest,
  pod,
  pvc,
  sleep,
  startHarness,
  waitFor,
} from './testUtils';

describe('PodLifecycleController', () => {
  let h: Harness;
  afterEach(() => h.stop());
  const get = (name: string) => h.store.get('pods', 'default', name);

  it('schedules a pod and starts it after the start-up delay', async () => {
    h = startHarness({ podStartupSeconds: 30 });
    h.store.create('pods', pod('app'));
    const scheduled = await waitFor(
      () => get('app')?.spec.nodeName && get('app'),
      'scheduled',
    );
    expect(scheduled.status.phase).toBe('Pending');
    expect(scheduled.status.conditions).toEqual([
      expect.objectContaining({ type: 'PodScheduled', status: 'True' }),
    ]);

    const running = await waitFor(
      () => get('app')?.status.phase === 'Running' && get('app'),
      'running',
    );
    expect(running.spec.nodeName).toBe('sim-node-1');
    expect(running.status).toMatchObject({
      hostIP: '10.89.0.2',
      podIP: expect.stringMatching(/^10\.244\.\d+\.\d+$/),
      qosClass: 'BestEffort',
      containerStatuses: [
        expect.objectContaining({
          name: 'main',
          image: 'docker.io/library/busybox:latest',
          ready: true,
          restartCount: 0,
          started: true,
          state: { running: { startedAt: expect.any(String) } },
        }),
      ],
    });
    expect(
      running.status.conditions.find((c: any) => c.type === 'Ready').status,
    ).toBe('True');
  });

  it('records what the scheduler and the kubelet record: Scheduled, the image, Created, Started, then Killing', async () => {
    h = startHarness();
    const created = h.store.create(
      'pods',
      pod('app', [], {
        containers: [
          { name: 'main', image: 'busybox' },
          {
            name: 'sidecar',
            image: 'registry.example.com/agent:2',
          },
        ],
      }),
    );
    await waitFor(() => get('app')?.status.phase === 'Running', 'running');
    h.store.delete('pods', 'default', 'app');
    await waitFor(() => !get('app'), 'removed');
    const from = (c: string) => ({
      from: 'kubelet',
      fieldPath: `spec.containers{${c}}`,
    });
    expect(eventsAbout(h.store, created)).toEqual([
      {
        type: 'Normal',
        reason: 'Scheduled',
        from: 'default-scheduler',
        message: 'Successfully assigned default/app to sim-node-1',
      },
      {
        type: 'Normal',
        reason: 'Pulling',
        message: 'Pulling image "busybox"',
        ...from('main'),
      },
      {
        type: 'Normal',
        reason: 'Pulled',
        message: expect.stringMatching(
          /^Successfully pulled image "busybox" in \S+s \(\S+s including waiting\)$/,
        ),
        ...from('main'),
      },
      {
        type: 'Normal',
        reason: 'Created',
        message: 'Created container main',
        ...from('main'),
      },
      {
        type: 'Normal',
        reason: 'Started',
        message: 'Started container main',
        ...from('main'),
      },
      {
        type: 'Normal',
        reason: 'Pulled',
        message:
          'Container image "registry.example.com/agent:2" already present on machine',
        ...from('sidecar'),
      },
      {
        type: 'Normal',
        reason: 'Created',
        message: 'Created container sidecar',
        ...from('sidecar'),
      },
      {
        type: 'Normal',
        reason: 'Started',
        message: 'Started container sidecar',
        ...from('sidecar'),
      },
      {
        type: 'Normal',
        reason: 'Killing',
        message: 'Stopping container main',
        ...from('main'),
      },
      {
        type: 'Normal',
        reason: 'Killing',
        message: 'Stopping container sidecar',
        ...from('sidecar'),
      },
    ]);
  });

  it('records FailedScheduling while a claim is missing', async () => {
    h = startHarness();
    const created = h.store.create('pods', pod('app', ['missing']));
    await waitFor(() => eventsAbout(h.store, created).length > 0, 'an event');
    expect(eventsAbout(h.store, created)).toEqual([
      {
        type: 'Warning',
        reason: 'FailedScheduling',
        from: 'default-scheduler',
        message: 'persistentvolumeclaim "missing" not found',
      },
    ]);
  });

  it('stops a deleted pod after its grace period, then removes it', async () => {
    h = startHarness();
    h.store.create(
      'pods',
      pod('app', [], { terminationGracePeriodSeconds: 100 }),
    );
    await waitFor(() => get('app')?.status.phase === 'Running', 'running');
    h.store.delete('pods', 'default', 'app');
    expect(get('app')!.metadata.deletionGracePeriodSeconds).toBe(100);
    await sleep(40);
    expect(get('app')).toBeDefined();
    await waitFor(() => !get('app'), 'pod removed');
    const stopped = h.log.find(
      e => e.resource === 'pods' && e.object.status?.phase === 'Succeeded',
    )!;
    expect(
      stopped.object.status.containerStatuses[0].state.terminated,
    ).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(
      h.log.find(isEvent('pods', 'DELETED', 'app'))!.object.metadata
        .deletionGracePeriodSeconds,
    ).toBe(0);
  });

  it('keeps a pod whose claim is missing or unbound Pending and unscheduled', async () => {
    h = startHarness();
    h.store.create('pods', pod('app', ['missing']));
    const pending = await waitFor(
      () => get('app')?.status.conditions && get('app'),
      'a scheduling verdict',
    );
    expect(pending.spec.nodeName).toBeUndefined();
    expect(pending.status.conditions[0]).toMatchObject({
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message: 'persistentvolumeclaim "missing" not found',
    });

    // A claim with no class and no volume to bind stays Pending, and so does the pod.
    h.store.create(
      'persistentvolumeclaims',
      pvc('missing', { storageClassName: '' }),
    );
    await waitFor(
      () =>
        get('app')!.status.conditions[0].message.includes(
          'unbound immediate PersistentVolumeClaims',
        ),
      'unbound claim verdict',
    );
    await sleep(20);
    expect(get('app')!.status.phase).toBe('Pending');

    h.store.create(
      'persistentvolumes',
      manifest({
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'manual' },
        spec: {
          capacity: { storage: '5Gi' },
          accessModes: ['ReadWriteOnce'],
          hostPath: { path: '/data' },
        },
      }),
    );
    await waitFor(
      () => get('app')?.status.phase === 'Running',
      'running once the claim is bound',
    );
    const bound = firstIndex(
      h.log,
      e =>
        e.resource === 'persistentvolumeclaims' &&
        e.object.status?.phase === 'Bound',
    );
    expect(
      firstIndex(h.log, e => e.resource === 'pods' && !!e.object.spec.nodeName),
    ).toBeGreaterThan(bound);
  });

  it('deletes an unscheduled pod at once', async () => {
    h = startHarness();
    h.store.create('pods', pod('app', ['missing']));
    await waitFor(() => get('app')?.status.conditions, 'a scheduling verdict');
    h.store.delete('pods', 'default', 'app');
    expect(get('app')).toBeUndefined();
  });
});
