import { mockCredentials } from '@backstage/backend-test-utils';
import { Entity } from '@backstage/catalog-model';
import { InputError, NotFoundError } from '@backstage/errors';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import {
  EntityWorkloads,
  parseEntityRefStrict,
  workloadTargetOf,
} from './EntityWorkloads';

function component(name: string, annotations?: Record<string, string>): Entity {
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    metadata: { name, namespace: 'default', annotations },
    spec: {},
  };
}

describe('workloadTargetOf', () => {
  it('selects by backstage.io/kubernetes-id as the Kubernetes plugin does', () => {
    expect(
      workloadTargetOf(
        component('orders', { 'backstage.io/kubernetes-id': 'orders' }),
      ),
    ).toMatchObject({
      entityRef: 'component:default/orders',
      labelSelector: 'backstage.io/kubernetes-id=orders',
      namespace: undefined,
      cluster: undefined,
    });
  });

  it('prefers backstage.io/kubernetes-label-selector, and reads the namespace and cluster annotations', () => {
    const target = workloadTargetOf(
      component('orders', {
        'backstage.io/kubernetes-id': 'orders',
        'backstage.io/kubernetes-label-selector': 'app=orders,tier in (db)',
        'backstage.io/kubernetes-namespace': 'shop',
        'backstage.io/kubernetes-cluster': 'prod',
      }),
    );

    expect(target).toMatchObject({
      labelSelector: 'app=orders,tier in (db)',
      namespace: 'shop',
      cluster: 'prod',
    });
  });

  it.each<Record<string, string> | undefined>([
    undefined,
    {},
    { 'backstage.io/kubernetes-id': '' },
    { 'backstage.io/kubernetes-namespace': 'shop' },
  ])(
    'refuses an entity without a usable Kubernetes annotation (%j), naming both it could use',
    annotations => {
      expect(() => workloadTargetOf(component('bare', annotations))).toThrow(
        InputError,
      );
      expect(() => workloadTargetOf(component('bare', annotations))).toThrow(
        'Entity component:default/bare has no Kubernetes annotations: add "backstage.io/kubernetes-id" or "backstage.io/kubernetes-label-selector" to find its StatefulSets',
      );
    },
  );
});

describe('parseEntityRefStrict', () => {
  it('normalises refs', () => {
    expect(parseEntityRefStrict('Component:orders')).toBe(
      'component:default/orders',
    );
    expect(parseEntityRefStrict('component:shop/orders')).toBe(
      'component:shop/orders',
    );
  });

  it.each(['orders', 'component:', ':orders', 'component:default/'])(
    'refuses %j as an InputError',
    ref => {
      expect(() => parseEntityRefStrict(ref)).toThrow(InputError);
      expect(() => parseEntityRefStrict(ref)).toThrow(
        `Malformed entityRef "${ref}"`,
      );
    },
  );
});

describe('EntityWorkloads', () => {
  it('fetches the entity with the caller’s credentials and resolves its target', async () => {
    const catalog = catalogServiceMock.mock({
      getEntityByRef: async () =>
        component('orders', { 'backstage.io/kubernetes-id': 'orders' }),
    });
    const credentials = mockCredentials.user('user:default/alice');

    const target = await new EntityWorkloads(catalog).resolve(
      'Component:orders',
      credentials,
    );

    expect(target.entityRef).toBe('component:default/orders');
    expect(catalog.getEntityByRef).toHaveBeenCalledWith(
      'component:default/orders',
      { credentials },
    );
  });

  it('answers NotFoundError for an entity the catalog does not have (or will not show this caller)', async () => {
    const workloads = new EntityWorkloads(catalogServiceMock({ entities: [] }));

    await expect(
      workloads.resolve('component:default/nope', mockCredentials.user()),
    ).rejects.toThrow(NotFoundError);
    await expect(
      workloads.resolve('component:default/nope', mockCredentials.user()),
    ).rejects.toThrow(
      'Entity component:default/nope was not found in the catalog',
    );
  });
});
