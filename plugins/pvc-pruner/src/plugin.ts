import {
  createComponentExtension,
  createPlugin,
  createRoutableExtension,
} from '@backstage/core-plugin-api';
import { PVC_PRUNER_PLUGIN_ID } from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerClientFactory } from './api/pvcPrunerClientFactory';
import type { PvcPrunerCardProps } from './components/PvcPrunerCard';
import { rootRouteRef } from './routes';

/**
 * The pvc-pruner frontend plugin (legacy frontend system).
 *
 * @public
 */
export const pvcPrunerPlugin = createPlugin({
  id: PVC_PRUNER_PLUGIN_ID,
  routes: { root: rootRouteRef },
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

/**
 * The fleet page: what every entity the user may read could reclaim across
 * clusters, in GiB and money, grouped by owner. Mount it at `/pvc-pruner`:
 * `<Route path="/pvc-pruner" element={<PvcPrunerFleetPage />} />`.
 *
 * @public
 */
export const PvcPrunerFleetPage: () => JSX.Element = pvcPrunerPlugin.provide(
  createRoutableExtension({
    name: 'PvcPrunerFleetPage',
    component: () => import('./components/FleetPage').then(m => m.FleetPage),
    mountPoint: rootRouteRef,
  }),
);
