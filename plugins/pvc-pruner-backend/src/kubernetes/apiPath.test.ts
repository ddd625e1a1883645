import { apiPath } from './apiPath';

describe('apiPath', () => {
  it.each([
    [
      'statefulsets',
      { namespace: 'shop' },
      '/apis/apps/v1/namespaces/shop/statefulsets',
    ],
    ['statefulsets', {}, '/apis/apps/v1/statefulsets'],
    [
      'persistentvolumeclaims',
      { namespace: 'shop', name: 'data-web-0' },
      '/api/v1/namespaces/shop/persistentvolumeclaims/data-web-0',
    ],
    ['pods', { namespace: 'shop' }, '/api/v1/namespaces/shop/pods'],
    ['persistentvolumes', { name: 'pv-1' }, '/api/v1/persistentvolumes/pv-1'],
    [
      'horizontalpodautoscalers',
      { namespace: 'shop' },
      '/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers',
    ],
    [
      'horizontalpodautoscalers',
      {},
      '/apis/autoscaling/v2/horizontalpodautoscalers',
    ],
  ] as const)('%s %j is %s', (resource, target, path) => {
    expect(apiPath(resource, target)).toBe(path);
  });

  it('encodes every segment, so a name cannot reach another path', () => {
    expect(
      apiPath('persistentvolumeclaims', {
        namespace: 'a/../kube-system',
        name: 'x?watch=true',
      }),
    ).toBe(
      '/api/v1/namespaces/a%2F..%2Fkube-system/persistentvolumeclaims/x%3Fwatch%3Dtrue',
    );
  });

  it('refuses a namespace for a cluster-scoped resource', () => {
    expect(() => apiPath('persistentvolumes', { namespace: 'shop' })).toThrow(
      /not namespaced/,
    );
  });
});
