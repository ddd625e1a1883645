import { pvcPrunerPlugin } from './plugin';

describe('pvcPrunerPlugin', () => {
  it('is defined with the pvc-pruner id', () => {
    expect(pvcPrunerPlugin).toBeDefined();
    expect(pvcPrunerPlugin.getId()).toBe('pvc-pruner');
  });
});
