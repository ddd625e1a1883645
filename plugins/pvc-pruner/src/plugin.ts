import {
  createComponentExtension,
  createPlugin,
} from '@backstage/core-plugin-api';
import { PVC_PRUNER_PLUGIN_ID } from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerClientFactory } from './api/pvcPrunerClientFactory';
import type { PvcPrunerCardProps } from './components/PvcPrunerCard';

/**
 * The pvc-pruner frontend plugin (legacy frontend system).
 *
 * @public
 */
export const pvcPrunerPlugin = createPlugin({
  id: PVC_PRUNER_PLUGIN_ID,
  apis: [pvcPrunerClientFactory],
});

/**
 * The "Orphaned volumes" card for an entity page: shows the claims the
 * entity's StatefulSets left behind, and prunes them. Render it inside an
 * entity page, for entities that pass {@link isPvcPrunerAvailable}.
 *
 * @public
 */
export const EntityPvcPrunerCard: (
  props: PvcPrunerCardProps,
) => JSX.Element | null = pvcPrunerPlugin.provide(
  createComponentExtension({
    name: 'EntityPvcPrunerCard',
    component: {
      lazy: () =>
        import('./components/PvcPrunerCard').then(m => m.PvcPrunerCard),
    },
  }),
);
