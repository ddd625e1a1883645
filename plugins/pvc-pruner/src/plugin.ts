import { createPlugin } from '@backstage/core-plugin-api';
import { PVC_PRUNER_PLUGIN_ID } from 'backstage-plugin-pvc-pruner-common';

/**
 * The pvc-pruner frontend plugin.
 *
 * @public
 */
export const pvcPrunerPlugin = createPlugin({
  id: PVC_PRUNER_PLUGIN_ID,
});
