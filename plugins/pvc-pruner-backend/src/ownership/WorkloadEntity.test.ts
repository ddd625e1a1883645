import { componentEntity } from '../__testUtils__/catalogEntities';
import { selectsByKubernetesId, workloadEntityOf } from './WorkloadEntity';

describe('selectsByKubernetesId', () => {
  it.each<[Record<string, string>, boolean]>([
    [{ 'backstage.io/kubernetes-id': 'orders' }, true],
    [
      {
        'backstage.io/kubernetes-label-selector':
          'backstage.io/kubernetes-id=orders',
      },
      true,
    ],
    [
      {
        'backstage.io/kubernetes-label-selector':
          ' backstage.io/kubernetes-id == orders ',
      },
      true,
    ],
    [{ 'backstage.io/kubernetes-label-selector': '!nonexistent' }, false],
    [{ 'backstage.io/kubernetes-label-selector': 'app=orders' }, false],
    [
      {
        'backstage.io/kubernetes-label-selector': 'backstage.io/kubernetes-id',
      },
      false,
    ],
    [
      {
        'backstage.io/kubernetes-label-selector':
          'backstage.io/kubernetes-id!=orders',
      },
      false,
    ],
    [
      {
        'backstage.io/kubernetes-label-selector':
          'backstage.io/kubernetes-id=orders,app=x',
      },
      false,
    ],
    [
      {
        'backstage.io/kubernetes-label-selector':
          'backstage.io/kubernetes-id in (orders)',
      },
      false,
    ],
    [
      {
        'backstage.io/kubernetes-label-selector': 'backstage.io/kubernetes-id=',
      },
      false,
    ],
    [
      {
        'backstage.io/kubernetes-label-selector':
          'backstageXio/kubernetes-id=orders',
      },
      false,
    ],
  ])('%j: %s', (annotations, plain) => {
    const target = workloadEntityOf(componentEntity('x', { annotations }))!;
    expect(selectsByKubernetesId(target)).toBe(plain);
  });
});

describe('workloadEntityOf', () => {
  it('resolves the owner as the catalog does (kind group, the entity’s namespace)', () => {
    expect(
      workloadEntityOf(componentEntity('orders', { owner: 'checkout' }))?.owner,
    ).toBe('group:default/checkout');
    expect(
      workloadEntityOf(componentEntity('orders', { owner: 'user:alice' }))
        ?.owner,
    ).toBe('user:default/alice');
  });

  it('has nothing for an entity without Kubernetes annotations', () => {
    expect(
      workloadEntityOf(componentEntity('bare', { annotations: {} })),
    ).toBeUndefined();
  });
});
