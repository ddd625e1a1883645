import { mockServices } from '@backstage/backend-test-utils';
import { Entity, stringifyEntityRef } from '@backstage/catalog-model';
import { AuthorizeResult } from '@backstage/plugin-permission-common';

/** The guest may act on `mine` only. */
export function permissionsOn(mine: Entity[]) {
  const refs = new Set(mine.map(e => stringifyEntityRef(e)));
  const permissions = mockServices.permissions.mock();
  permissions.authorize.mockImplementation(async requests =>
    requests.map(r => ({
      result:
        'resourceRef' in r && r.resourceRef && refs.has(r.resourceRef)
          ? AuthorizeResult.ALLOW
          : AuthorizeResult.DENY,
    })),
  );
  return permissions;
}
