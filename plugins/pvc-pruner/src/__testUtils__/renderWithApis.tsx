import { ReactNode } from 'react';
import { RenderResult } from '@testing-library/react';
import { Entity } from '@backstage/catalog-model';
import {
  EntityProvider,
  entityRouteRef,
} from '@backstage/plugin-catalog-react';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  TestApiProvider,
  mockApis,
  renderInTestApp,
} from '@backstage/test-utils';
import { PvcPrunerApi, pvcPrunerApiRef } from '../api/PvcPrunerApi';

let counter = 0;

/**
 * An entity with a unique name: usePermission caches answers per resource,
 * so each test asks about its own entity.
 */
export function makeEntity(
  annotations: Record<string, string> = {
    'backstage.io/kubernetes-id': 'shop',
  },
): Entity {
  counter += 1;
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    metadata: { name: `shop-${counter}`, namespace: 'default', annotations },
    spec: { type: 'service', owner: 'team-a', lifecycle: 'production' },
  };
}

export interface RenderOptions {
  /** Usually a FakePvcPrunerApi; a PvcPrunerClient where the HTTP requests are the point. */
  api: PvcPrunerApi;
  entity?: Entity;
  /** Permission name → answer; anything not named is allowed. */
  deny?: string[];
  /** Entity refs on which `pvc-pruner.prune` is denied; on the others it is allowed. */
  denyPruneOn?: string[];
}

/** Renders `children` in a test app with the fake API, a permission mock and an entity. */
export async function renderWithApis(
  children: ReactNode,
  options: RenderOptions,
): Promise<RenderResult & { entity: Entity }> {
  const entity = options.entity ?? makeEntity();
  const deny = new Set(options.deny ?? []);
  const denyPruneOn = new Set(options.denyPruneOn ?? []);
  const permissionApi = mockApis.permission({
    authorize: request =>
      deny.has(request.permission.name) ||
      (request.permission.name === 'pvc-pruner.prune' &&
        'resourceRef' in request &&
        denyPruneOn.has(String(request.resourceRef)))
        ? AuthorizeResult.DENY
        : AuthorizeResult.ALLOW,
  });
  const result = await renderInTestApp(
    <TestApiProvider
      apis={[
        [pvcPrunerApiRef, options.api],
        [permissionApiRef, permissionApi],
      ]}
    >
      <EntityProvider entity={entity}>{children}</EntityProvider>
    </TestApiProvider>,
    // As in every app: the catalog mounts the entity route the plugin links with.
    { mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef } },
  );
  return { ...result, entity };
}
