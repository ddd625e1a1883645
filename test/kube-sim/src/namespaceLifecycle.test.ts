import { manifest, startHarness } from './controllers/testUtils';

/* NamespaceLifecycle admission, as kube-apiserver answers: nothing is created in a missing or Terminating namespace. */

const lease = (namespace: string) =>
  manifest({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'pvc-pruner-reclaim-team', namespace },
    spec: { holderIdentity: 'x', leaseDurationSeconds: 30 },
  });

describe('NamespaceLifecycle admission', () => {
  it('refuses a create in a namespace that does not exist with 404 NotFound, and in a Terminating one with 403 Forbidden', () => {
    const h = startHarness();
    try {
      expect(() =>
        h.store.create('coordination.k8s.io/leases', lease('gone')),
      ).toThrow(
        expect.objectContaining({
          code: 404,
          message: 'namespaces "gone" not found',
        }),
      );
      h.store.create(
        'namespaces',
        manifest({
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: 'team', finalizers: ['example.com/hold'] },
        }),
      );
      h.store.delete('namespaces', undefined, 'team');
      expect(() =>
        h.store.create('coordination.k8s.io/leases', lease('team')),
      ).toThrow(
        expect.objectContaining({
          code: 403,
          message:
            'leases "pvc-pruner-reclaim-team" is forbidden: unable to create new content in namespace team because it is being terminated',
        }),
      );
      // The namespace a reclaim Lease defaults to is always there.
      expect(
        h.store.create('coordination.k8s.io/leases', lease('default')),
      ).toBeDefined();
    } finally {
      void h.stop();
    }
  });
});
