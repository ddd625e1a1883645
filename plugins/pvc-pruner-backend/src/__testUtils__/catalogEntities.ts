import { Entity } from '@backstage/catalog-model';

/**
 * A production service Component in namespace default, owned by `owner`
 * (team-a unless told); its annotations are the kubernetes-id of its name
 * unless given.
 */
export function componentEntity(
  name: string,
  options: { owner?: string; annotations?: Record<string, string> } = {},
): Entity {
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    metadata: {
      name,
      namespace: 'default',
      annotations: options.annotations ?? {
        'backstage.io/kubernetes-id': name,
      },
    },
    spec: {
      type: 'service',
      owner: options.owner ?? 'team-a',
      lifecycle: 'production',
    },
  };
}
