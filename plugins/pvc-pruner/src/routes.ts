import { createRouteRef } from '@backstage/core-plugin-api';

/**
 * The fleet page (`/pvc-pruner` by default).
 *
 * @public
 */
export const rootRouteRef = createRouteRef({ id: 'pvc-pruner' });
