import {
  Harness,
  manifest,
  pvc,
  startHarness,
  statefulSet,
  waitFor,
} from './testUtils';

describe('NamespaceController', () => {
  let h: Harness;
  afterEach(() => h.stop());

  it('empties a deleted namespace, then removes it', async () => {
    h = startHarness();
    h.store.create(
      'namespaces',
      manifest({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'team' },
      }),
    );
    h.store.create(
      'apps/statefulsets',
      statefulSet('db', { replicas: 2 }, 'team'),
    );
    await waitFor(
      () =>
        h.store.get('apps/statefulsets', 'team', 'db')?.status.readyReplicas ===
        2,
      'set ready',
    );
    const volumes = h.store
      .list('persistentvolumes')
      .items.map(v => v.metadata.name);
    expect(volumes).toHaveLength(2);

    h.store.delete('namespaces', undefined, 'team');
    const terminating = h.store.get('namespaces', undefined, 'team')!;
    expect(terminating.status.phase).toBe('Terminating');
    expect(() =>
      h.store.create('persistentvolumeclaims', pvc('late', {}, 'team')),
    ).toThrow(/being terminated/);

    await waitFor(
      () => !h.store.get('namespaces', undefined, 'team'),
      'namespace gone',
    );
    for (const resource of [
      'pods',
      'persistentvolumeclaims',
      'apps/statefulsets',
      'events',
    ]) {
      expect(h.store.list(resource, { namespace: 'team' }).items).toEqual([]);
    }
    await waitFor(
      () => volumes.every(v => !h.store.get('persistentvolumes', undefined, v)),
      'volumes reclaimed',
    );
  });
});
