import { compatWrapper } from '@backstage/core-compat-api';
import { EntityCardBlueprint } from '@backstage/plugin-catalog-react/alpha';
import { isPvcPrunerAvailable } from '../utils/isPvcPrunerAvailable';

/**
 * The "Orphaned volumes" card on the entity overview, for entities with
 * Kubernetes annotations. Off by default (the entity tab shows the same);
 * enable it with `app.extensions: [entity-card:pvc-pruner/orphaned-volumes]`.
 */
export const entityPvcPrunerCard = EntityCardBlueprint.make({
  name: 'orphaned-volumes',
  disabled: true,
  params: {
    type: 'content',
    filter: isPvcPrunerAvailable,
    loader: () =>
      import('../components/PvcPrunerCard').then(m =>
        compatWrapper(<m.PvcPrunerCard />),
      ),
  },
});
