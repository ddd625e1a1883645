import {
  firstIndex,
  Harness,
  isEvent,
  manifest,
  sleep,
  startHarness,
  statefulSet,
  waitFor,
} from './testUtils';

const SETS = 'apps/statefulsets';
const CLASSES = 'storage.k8s.io/storageclasses';

describe('GarbageCollector', () => {
  let h: Harness;
  afterEach(() => h.stop());

  const pods = () => h.store.list('pods', { namespace: 'default' }).items;
  const readySet = async (spec: Record<string, unknown> = {}) => {
    h.store.create(SETS, statefulSet('web', { replicas: 2, ...spec }));
    return waitFor(() => {
      const set = h.store.get(SETS, 'default', 'web');
      return set?.status?.readyReplicas === 2 && set;
    }, '2 ready replicas');
  };
  const slowTemplate = {
    metadata: { labels: { app: 'web' } },
    spec: {
      terminationGracePeriodSeconds: 100,
      containers: [{ name: 'main', image: 'nginx' }],
    },
  };

  it('Foreground deletion of a StatefulSet waits until its pods have finished terminating', async () => {
    h = startHarness();
    await readySet({ template: slowTemplate });
    h.store.delete(SETS, 'default', 'web', { propagationPolicy: 'Foreground' });
    const terminating = h.store.get(SETS, 'default', 'web')!;
    expect(terminating.metadata.deletionTimestamp).toBeDefined();
    expect(terminating.metadata.finalizers).toEqual(['foregroundDeletion']);

    await waitFor(
      () => pods().every(p => p.metadata.deletionTimestamp),
      'pods terminating',
    );
    expect(h.store.get(SETS, 'default', 'web')).toBeDefined();
    await waitFor(() => !h.store.get(SETS, 'default', 'web'), 'the set gone');
    const setGone = firstIndex(h.log, isEvent(SETS, 'DELETED', 'web'));
    for (const name of ['web-0', 'web-1']) {
      const podGone = firstIndex(h.log, isEvent('pods', 'DELETED', name));
      expect(podGone).toBeGreaterThanOrEqual(0);
      expect(podGone).toBeLessThan(setGone);
    }
    expect(
      h.store.list('persistentvolumeclaims', { namespace: 'default' }).items,
    ).toHaveLength(2);
  });

  it('Orphan deletion leaves the pods running without an ownerReference', async () => {
    h = startHarness();
    await readySet();
    h.store.delete(SETS, 'default', 'web', { propagationPolicy: 'Orphan' });
    await waitFor(() => !h.store.get(SETS, 'default', 'web'), 'the set gone');
    await sleep(50);
    expect(pods().map(p => p.metadata.name)).toEqual(['web-0', 'web-1']);
    for (const p of pods()) {
      expect(p.metadata.ownerReferences).toBeUndefined();
      expect(p.metadata.deletionTimestamp).toBeUndefined();
      expect(p.status.phase).toBe('Running');
    }
  });

  it('a recreated StatefulSet adopts orphaned pods', async () => {
    h = startHarness();
    await readySet();
    const before = pods().map(p => p.metadata.uid);
    h.store.delete(SETS, 'default', 'web', { propagationPolicy: 'Orphan' });
    await waitFor(() => !h.store.get(SETS, 'default', 'web'), 'the set gone');
    const set = await readySet();
    await waitFor(
      () =>
        pods().every(
          p => p.metadata.ownerReferences?.[0]?.uid === set.metadata.uid,
        ),
      'pods adopted',
    );
    expect(pods().map(p => p.metadata.uid)).toEqual(before);
  });

  it('Background deletion removes the pods after the set', async () => {
    h = startHarness();
    await readySet();
    h.store.delete(SETS, 'default', 'web');
    expect(h.store.get(SETS, 'default', 'web')).toBeUndefined();
    await waitFor(() => pods().length === 0, 'pods deleted');
  });

  const owner = (name: string) =>
    h.store.create(
      CLASSES,
      manifest({
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name },
        provisioner: 'example.com/none',
      }),
    );
  const refTo = (o: { metadata: { name: string; uid: string } }) => ({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    name: o.metadata.name,
    uid: o.metadata.uid,
  });
  const dependent = (ownerReferences: unknown[]) =>
    h.store.create(
      'events',
      manifest({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'dependent', namespace: 'default', ownerReferences },
        reason: 'Test',
        message: 'test',
      }),
    );

  it('drops the reference to a deleted owner while another owner lives, then deletes the orphan', async () => {
    h = startHarness();
    const a = owner('owner-a');
    const b = owner('owner-b');
    dependent([refTo(a), refTo(b)]);
    await sleep(20);
    expect(
      h.store.get('events', 'default', 'dependent')!.metadata.ownerReferences,
    ).toHaveLength(2);

    h.store.delete(CLASSES, undefined, 'owner-a');
    await waitFor(
      () =>
        h.store.get('events', 'default', 'dependent')!.metadata.ownerReferences!
          .length === 1,
      'the dangling ref dropped',
    );
    expect(
      h.store.get('events', 'default', 'dependent')!.metadata.ownerReferences,
    ).toEqual([refTo(b)]);

    h.store.delete(CLASSES, undefined, 'owner-b');
    await waitFor(
      () => !h.store.get('events', 'default', 'dependent'),
      'the dependent deleted',
    );
  });

  it('deletes a dependent whose owner never existed or was replaced', async () => {
    h = startHarness();
    const a = owner('owner-a');
    dependent([{ ...refTo(a), uid: 'a-previous-incarnation' }]);
    await waitFor(
      () => !h.store.get('events', 'default', 'dependent'),
      'the dependent of a replaced owner deleted',
    );
    expect(h.store.get(CLASSES, undefined, 'owner-a')).toBeDefined();
  });

  it('leaves dependents of kinds it cannot hold alone', async () => {
    h = startHarness();
    dependent([
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-uid' },
    ]);
    await sleep(20);
    expect(h.store.get('events', 'default', 'dependent')).toBeDefined();
  });
});
