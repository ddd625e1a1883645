import {
  BackstageCredentials,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import {
  AuthorizePermissionRequest,
  AuthorizeResult,
  BasicPermission,
  ResourcePermission,
} from '@backstage/plugin-permission-common';

/**
 * Requests per call to the permission framework. Its backend parses bodies
 * with express.json()'s default limit of 100 kB, about 500 requests, so a
 * bigger batch would be refused as a whole (413).
 */
export const AUTHORIZE_CHUNK = 250;

/**
 * Which of many catalog entities the caller holds a permission on, and
 * whether they hold some basic permissions, in one batch to the permission
 * framework (split into calls of {@link AUTHORIZE_CHUNK}, sent together):
 * conditional decisions (such as "is entity owner") are applied by the
 * catalog to the whole batch of resourceRefs at once.
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
  const requests: AuthorizePermissionRequest[] = [
    ...entityRefs.map(resourceRef => ({ permission, resourceRef })),
    ...basic.map(p => ({ permission: p })),
  ];
  const chunks: AuthorizePermissionRequest[][] = [];
  for (let i = 0; i < requests.length; i += AUTHORIZE_CHUNK)
    chunks.push(requests.slice(i, i + AUTHORIZE_CHUNK));
  const decisions = (
    await Promise.all(
      chunks.map(chunk => permissions.authorize(chunk, { credentials })),
    )
  ).flat();
  const allow = decisions.map(d => d.result === AuthorizeResult.ALLOW);
  return {
    allowed: new Set(entityRefs.filter((_, i) => allow[i])),
    basic: basic.map((_, i) => allow[entityRefs.length + i]),
  };
}
