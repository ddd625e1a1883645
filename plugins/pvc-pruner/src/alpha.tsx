/**
 * The pvc-pruner plugin for Backstage's new frontend system.
 *
 * @packageDocumentation
 */

import { convertLegacyRouteRefs } from '@backstage/core-compat-api';
import { createFrontendPlugin } from '@backstage/frontend-plugin-api';
import { PVC_PRUNER_PLUGIN_ID } from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerApi } from './alpha/apis';
import { entityPvcPrunerCard } from './alpha/entityCards';
import { entityPvcPrunerContent } from './alpha/entityContents';
import { pvcPrunerFleetPage } from './alpha/pages';
import { rootRouteRef } from './routes';

/**
 * The pvc-pruner frontend plugin: its API client, an entity tab and an
 * (opt-in) entity card, both shown only for entities with Kubernetes
 * annotations, and the fleet page at `/pvc-pruner` (listed in the nav).
 *
 * @alpha
 */
export default createFrontendPlugin({
  pluginId: PVC_PRUNER_PLUGIN_ID,
  title: 'PVC pruner',
  info: { packageJson: () => import('../package.json') },
  routes: convertLegacyRouteRefs({ root: rootRouteRef }),
  extensions: [
    pvcPrunerApi,
    entityPvcPrunerContent,
    entityPvcPrunerCard,
    pvcPrunerFleetPage,
  ],
});
