import {
  createPermission,
  Permission,
} from '@backstage/plugin-permission-common';
import { RESOURCE_TYPE_CATALOG_ENTITY } from '@backstage/plugin-catalog-common/alpha';

/**
 * Allows listing an entity's orphaned PersistentVolumeClaims.
 * A resource permission on the catalog entity, so a policy can use catalog
 * conditions such as "is entity owner".
 *
 * @public
 */
export const pvcPrunerOrphansReadPermission = createPermission({
  name: 'pvc-pruner.orphans.read',
  attributes: { action: 'read' },
  resourceType: RESOURCE_TYPE_CATALOG_ENTITY,
});

/**
 * Allows deleting an entity's orphaned PersistentVolumeClaims (and dry runs of it).
 *
 * @public
 */
export const pvcPrunerPrunePermission = createPermission({
  name: 'pvc-pruner.prune',
  attributes: { action: 'delete' },
  resourceType: RESOURCE_TYPE_CATALOG_ENTITY,
});

/**
 * Allows seeing, in the fleet view, the StatefulSets with orphans that no
 * catalog entity maps to (for platform teams). A basic permission: there is
 * no entity to check it against.
 *
 * @public
 */
export const pvcPrunerFleetUnownedReadPermission = createPermission({
  name: 'pvc-pruner.fleet.unowned.read',
  attributes: { action: 'read' },
});

/**
 * Allows pruning the claims of a StatefulSet that no catalog entity claims
 * but the one the prune goes through, when that entity's selector is not
 * the plain `backstage.io/kubernetes-id` label (a catch-all selector, say),
 * and the claims of StatefulSets no entity claims at all, from the fleet
 * page's Unowned section. For platform teams: a basic permission, since no
 * entity vouches for such a StatefulSet.
 *
 * @public
 */
export const pvcPrunerUnownedPrunePermission = createPermission({
  name: 'pvc-pruner.unowned.prune',
  attributes: { action: 'delete' },
});

/**
 * Allows reclaiming the Released volumes of an entity's pruned claims: setting
 * their reclaim policy to `Delete`, after which their provisioner deletes the
 * disk. Needed on every entity a volume's claim is traced to; a volume no
 * entity can be traced to needs `pvc-pruner.unowned.prune` instead.
 *
 * @public
 */
export const pvcPrunerVolumesReclaimPermission = createPermission({
  name: 'pvc-pruner.volumes.reclaim',
  attributes: { action: 'delete' },
  resourceType: RESOURCE_TYPE_CATALOG_ENTITY,
});

/**
 * Every permission of the plugin, for `permissionsRegistry.addPermissions`.
 *
 * @public
 */
export const pvcPrunerPermissions: Permission[] = [
  pvcPrunerOrphansReadPermission,
  pvcPrunerPrunePermission,
  pvcPrunerFleetUnownedReadPermission,
  pvcPrunerUnownedPrunePermission,
  pvcPrunerVolumesReclaimPermission,
];
