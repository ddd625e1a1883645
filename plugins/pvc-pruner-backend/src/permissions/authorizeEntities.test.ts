import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  pvcPrunerFleetUnownedReadPermission,
  pvcPrunerOrphansReadPermission,
} from 'backstage-plugin-pvc-pruner-common';
import { AUTHORIZE_CHUNK, authorizeEntities } from './authorizeEntities';

describe('authorizeEntities', () => {
  it('sends a big batch in calls the permission backend accepts (its body limit is about 500 requests), and keeps each answer with its entity', async () => {
    const permissions = mockServices.permissions.mock();
    permissions.authorize.mockImplementation(async requests =>
      requests.map(r => ({
        result:
          'resourceRef' in r && r.resourceRef?.endsWith('7')
            ? AuthorizeResult.DENY
            : AuthorizeResult.ALLOW,
      })),
    );
    const entityRefs = Array.from(
      { length: 1000 },
      (_, i) => `component:default/e${i}`,
    );

    const { allowed, basic } = await authorizeEntities({
      permissions,
      permission: pvcPrunerOrphansReadPermission,
      entityRefs,
      basic: [pvcPrunerFleetUnownedReadPermission],
      credentials: mockCredentials.user(),
    });

    const sizes = permissions.authorize.mock.calls.map(c => c[0].length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(AUTHORIZE_CHUNK);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(1001);
    expect(allowed.size).toBe(900);
    expect(allowed.has('component:default/e17')).toBe(false);
    expect(allowed.has('component:default/e18')).toBe(true);
    expect(basic).toEqual([true]);
  });
});
