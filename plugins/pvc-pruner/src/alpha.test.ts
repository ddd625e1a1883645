import plugin from './alpha';

describe('pvc-pruner (new frontend system)', () => {
  it('provides the API, the entity tab, the entity card and the fleet page', () => {
    expect(plugin.pluginId).toBe('pvc-pruner');
    expect(plugin.getExtension('api:pvc-pruner')).toBeDefined();
    expect(
      plugin.getExtension('entity-content:pvc-pruner/orphaned-volumes'),
    ).toBeDefined();
    expect(
      plugin.getExtension('entity-card:pvc-pruner/orphaned-volumes'),
    ).toBeDefined();
    expect(plugin.getExtension('page:pvc-pruner')).toBeDefined();
    expect(plugin.routes.root).toBeDefined();
  });
});
