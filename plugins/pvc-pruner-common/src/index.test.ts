import { PVC_PRUNER_PLUGIN_ID } from './index';

describe('PVC_PRUNER_PLUGIN_ID', () => {
  it('is the id both plugins register under', () => {
    expect(PVC_PRUNER_PLUGIN_ID).toBe('pvc-pruner');
  });
});
