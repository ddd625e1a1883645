import {
  BackstageCredentials,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import {
  AuthorizeResult,
  BasicPermission,
  ResourcePermission,
} from '@backstage/plugin-permission-common';

/**
 * Throws NotAllowedError unless the caller holds the permission on the
 * catalog entity; conditional decisions (e.g. "is entity owner") are applied
 * by the catalog through the permission framework.
 */
export async function requirePermission(options: {
  permissions: PermissionsService;
  permission: ResourcePermission<'catalog-entity'>;
  entityRef: string;
  credentials: BackstageCredentials;
}): Promise<void> {
  const { permissions, permission, entityRef, credentials } = options;
  const [decision] = await permissions.authorize(
    [{ permission, resourceRef: entityRef }],
    { credentials },
  );
  if (decision.result !== AuthorizeResult.ALLOW) {
    throw new NotAllowedError(
      `You are not allowed to ${
        permission.attributes.action === 'delete' ? 'prune' : 'view'
      } the claims of ${entityRef} (${permission.name})`,
    );
  }
}

/** Throws NotAllowedError, saying `why` it is needed, unless the caller holds the basic permission. */
export async function requireBasicPermission(options: {
  permissions: PermissionsService;
  permission: BasicPermission;
  credentials: BackstageCredentials;
  why: string;
}): Promise<void> {
  const { permissions, permission, credentials, why } = options;
  const [decision] = await permissions.authorize([{ permission }], {
    credentials,
  });
  if (decision.result !== AuthorizeResult.ALLOW)
    throw new NotAllowedError(`${why} needs ${permission.name}`);
}
