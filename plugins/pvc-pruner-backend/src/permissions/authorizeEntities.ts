import {
  BackstageCredentials,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import {
  AuthorizeResult,
  BasicPermission,
  ResourcePermission,
} from '@backstage/plugin-permission-common';

/**
 * Which of many catalog entities the caller holds a permission on, and
 * whether they hold some basic permissions, in one call to the permission
 * framework: conditional decisions (such as "is entity owner") are applied by
 * the catalog to the whole batch of resourceRefs at once.
 */
export async function authorizeEntities(options: {
  permissions: PermissionsService;
  permission: ResourcePermission<'catalog-entity'>;
  entityRefs: string[];
  basic?: BasicPermission[];
  credentials: BackstageCredentials;
}): Promise<{ allowed: Set<string>; basic: boolean[] }> {
  const { permissions, permission, entityRefs, credentials } = options;
  const basic = options.basic ?? [];
  const decisions = await permissions.authorize(
    [
      ...entityRefs.map(resourceRef => ({ permission, resourceRef })),
      ...basic.map(p => ({ permission: p })),
    ],
    { credentials },
  );
  const allow = decisions.map(d => d.result === AuthorizeResult.ALLOW);
  return {
    allowed: new Set(entityRefs.filter((_, i) => allow[i])),
    basic: basic.map((_, i) => allow[entityRefs.length + i]),
  };
}
