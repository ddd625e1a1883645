import {
  compatWrapper,
  convertLegacyRouteRef,
} from '@backstage/core-compat-api';
import { PageBlueprint } from '@backstage/frontend-plugin-api';
import StorageIcon from '@material-ui/icons/Storage';
import { rootRouteRef } from '../routes';

/**
 * The fleet page at `/pvc-pruner`. With a title and an icon, the app's nav
 * lists it by itself: frontend-plugin-api 1.0 derives nav items from pages
 * (its NavItemBlueprint is gone).
 */
export const pvcPrunerFleetPage = PageBlueprint.make({
  params: {
    path: '/pvc-pruner',
    routeRef: convertLegacyRouteRef(rootRouteRef),
    title: 'Orphaned volumes',
    icon: <StorageIcon fontSize="inherit" />,
    loader: () =>
      import('../components/FleetView').then(m =>
        compatWrapper(<m.FleetView />),
      ),
  },
});
