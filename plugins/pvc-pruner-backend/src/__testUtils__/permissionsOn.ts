import { mockServices } from '@backstage/backend-test-utils';
import { Entity, stringifyEntityRef } from '@backstage/catalog-model';
import { AuthorizeResult } from '@backstage/plugin-permission-common';

/** The guest may act on `mine` only, and holds the basic permissions named in `basic`. */
export function permissionsOn(mine: Entity[], basic: string[] = []) {
  const refs = new Set(mine.map(e => stringifyEntityRef(e)));
  const permissions = mockServices.permissions.mock();
  permissions.authorize.mockImplementation(async requests =>
    requests.map(r => {
      const allowed =
        'resourceRef' in r && r.resourceRef
          ? refs.has(r.resourceRef)
          : basic.includes(r.permission.name);
      return {
        result: allowed ? AuthorizeResult.ALLOW : AuthorizeResult.DENY,
      };
    }),
  );
  return permissions;
}
