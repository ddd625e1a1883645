/**
 * The pvc-pruner plugin for Backstage's new frontend system.
 *
 * @packageDocumentation
 */

import { createFrontendPlugin } from '@backstage/frontend-plugin-api';
import { PVC_PRUNER_PLUGIN_ID } from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerApi } from './alpha/apis';
import { entityPvcPrunerCard } from './alpha/entityCards';
import { entityPvcPrunerContent } from './alpha/entityContents';

/**
 * The pvc-pruner frontend plugin: its API client, an entity tab and an
 * (opt-in) entity card, both shown only for entities with Kubernetes annotations.
 *
 * @alpha
 */
export default createFrontendPlugin({
  pluginId: PVC_PRUNER_PLUGIN_ID,
  title: 'PVC pruner',
  info: { packageJson: () => import('../package.json') },
  extensions: [pvcPrunerApi, entityPvcPrunerContent, entityPvcPrunerCard],
});
