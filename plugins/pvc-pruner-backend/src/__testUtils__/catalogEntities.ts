import { Entity } from '@backstage/catalog-model';
import { ClaimantIndex, workloadEntityOf } from '../ownership';

/**
 * A production service Component in namespace default, owned by `owner`
 * (team-a unless told); its annotations are the kubernetes-id of its name
 * unless given; its catalog uid is `uid-<name>` unless given (an entity
 * registered again under the same name gets another).
 */
export function componentEntity(
  name: string,
  options: {
    owner?: string;
    annotations?: Record<string, string>;
    uid?: string;
  } = {},
): Entity {
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    metadata: {
      name,
      namespace: 'default',
      uid: options.uid ?? `uid-${name}`,
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

/** A warm catalog read holding these entities, as WorkloadCatalog would index them. */
export function catalogOf(entities: Entity[]) {
  const index = new ClaimantIndex(
    entities.flatMap(e => workloadEntityOf(e) ?? []),
  );
  return { warm: async () => index, fresh: async () => index };
}

/** The uids componentEntity gives the components these refs name, as a lineage records them. */
export const uidsOf = (refs: string[]): Record<string, string> =>
  Object.fromEntries(refs.map(ref => [ref, `uid-${ref.split('/')[1]}`]));
