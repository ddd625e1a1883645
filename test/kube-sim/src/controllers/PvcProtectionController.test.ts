import {
  firstIndex,
  Harness,
  isEvent,
  pod,
  pvc,
  sleep,
  startHarness,
  waitFor,
} from './testUtils';

describe('PvcProtectionController', () => {
  let h: Harness;
  afterEach(() => h.stop());
  const claim = () => h.store.get('persistentvolumeclaims', 'default', 'data');

  it('keeps a deleted claim while a pod, even a terminating one, mounts it', async () => {
    h = startHarness();
    h.store.create('persistentvolumeclaims', pvc('data'));
    h.store.create(
      'pods',
      pod('app', ['data'], { terminationGracePeriodSeconds: 100 }),
    );
    await waitFor(
      () => h.store.get('pods', 'default', 'app')?.status.phase === 'Running',
      'pod running',
    );
    expect(claim()!.metadata.finalizers).toEqual([
      'kubernetes.io/pvc-protection',
    ]);

    h.store.delete('persistentvolumeclaims', 'default', 'data');
    await sleep(20);
    expect(claim()!.metadata.deletionTimestamp).toBeDefined();
    expect(claim()!.metadata.finalizers).toEqual([
      'kubernetes.io/pvc-protection',
    ]);

    h.store.delete('pods', 'default', 'app');
    await sleep(40);
    expect(
      h.store.get('pods', 'default', 'app')!.metadata.deletionTimestamp,
    ).toBeDefined();
    expect(claim()).toBeDefined();

    await waitFor(() => !claim(), 'claim gone');
    expect(
      firstIndex(h.log, isEvent('persistentvolumeclaims', 'DELETED', 'data')),
    ).toBeGreaterThan(firstIndex(h.log, isEvent('pods', 'DELETED', 'app')));
  });

  it('lets an unused claim go at once', async () => {
    h = startHarness();
    h.store.create('persistentvolumeclaims', pvc('data'));
    h.store.delete('persistentvolumeclaims', 'default', 'data');
    await waitFor(() => !claim(), 'claim gone');
    expect(
      h.log.find(
        e => e.type === 'DELETED' && e.resource === 'persistentvolumeclaims',
      )!.object.metadata.finalizers,
    ).toBeUndefined();
  });

  it('ignores pods that are not scheduled', async () => {
    h = startHarness();
    h.store.create(
      'persistentvolumeclaims',
      pvc('data', { storageClassName: 'no-such-class' }),
    );
    h.store.create('pods', pod('app', ['data']));
    await waitFor(
      () => h.store.get('pods', 'default', 'app')?.status.conditions,
      'scheduling verdict',
    );
    h.store.delete('persistentvolumeclaims', 'default', 'data');
    await waitFor(() => !claim(), 'claim gone');
    expect(
      h.store.get('pods', 'default', 'app')!.spec.nodeName,
    ).toBeUndefined();
  });
});
