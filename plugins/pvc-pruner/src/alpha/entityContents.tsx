import { compatWrapper } from '@backstage/core-compat-api';
import { EntityContentBlueprint } from '@backstage/plugin-catalog-react/alpha';
import { isPvcPrunerAvailable } from '../utils/isPvcPrunerAvailable';

/** The "Volumes" tab of entities with Kubernetes annotations. */
export const entityPvcPrunerContent = EntityContentBlueprint.make({
  name: 'orphaned-volumes',
  params: {
    path: '/orphaned-volumes',
    title: 'Volumes',
    group: 'deployment',
    filter: isPvcPrunerAvailable,
    loader: () =>
      import('../components/PvcPrunerCard').then(m =>
        compatWrapper(<m.PvcPrunerCard />),
      ),
  },
});
