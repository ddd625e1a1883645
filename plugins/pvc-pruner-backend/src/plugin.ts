import {
  coreServices,
  createBackendPlugin,
} from '@backstage/backend-plugin-api';
import { PVC_PRUNER_PLUGIN_ID } from 'backstage-plugin-pvc-pruner-common';
import { createRouter } from './router';

/**
 * The pvc-pruner backend plugin.
 *
 * @public
 */
export const pvcPrunerPlugin = createBackendPlugin({
  pluginId: PVC_PRUNER_PLUGIN_ID,
  register(env) {
    env.registerInit({
      deps: {
        httpRouter: coreServices.httpRouter,
      },
      async init({ httpRouter }) {
        httpRouter.use(await createRouter());
        httpRouter.addAuthPolicy({
          path: '/health',
          allow: 'unauthenticated',
        });
      },
    });
  },
});
