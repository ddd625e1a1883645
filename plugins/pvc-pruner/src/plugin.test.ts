import {
  EntityPvcPrunerCard,
  isPvcPrunerAvailable,
  pvcPrunerFleetRouteRef,
  PvcPrunerFleetPage,
  pvcPrunerPlugin,
} from './index';
import { makeEntity } from './__testUtils__/renderWithApis';

describe('pvcPrunerPlugin', () => {
  it('is defined with the pvc-pruner id and provides its API', () => {
    expect(pvcPrunerPlugin.getId()).toBe('pvc-pruner');
    expect([...pvcPrunerPlugin.getApis()].map(api => api.api.id)).toEqual([
      'plugin.pvc-pruner.service',
    ]);
    expect(EntityPvcPrunerCard).toBeDefined();
  });

  it('provides the fleet page as a routable extension on its root route', () => {
    expect(PvcPrunerFleetPage).toBeDefined();
    expect(pvcPrunerPlugin.routes).toEqual({ root: pvcPrunerFleetRouteRef });
  });

  it('is available for entities with a Kubernetes id or label selector', () => {
    expect(
      isPvcPrunerAvailable(
        makeEntity({ 'backstage.io/kubernetes-id': 'shop' }),
      ),
    ).toBe(true);
    expect(
      isPvcPrunerAvailable(
        makeEntity({ 'backstage.io/kubernetes-label-selector': 'app=shop' }),
      ),
    ).toBe(true);
    expect(
      isPvcPrunerAvailable(
        makeEntity({ 'backstage.io/kubernetes-namespace': 'shop' }),
      ),
    ).toBe(false);
    expect(isPvcPrunerAvailable(makeEntity({}))).toBe(false);
  });
});
