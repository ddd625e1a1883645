import type { V1StatefulSet } from '@kubernetes/client-node';
import { NotAllowedError, NotFoundError } from '@backstage/errors';
import type { EntityWorkloadTarget } from '../orphans';
import { ClusterRequestError, type KubeGateway } from '../kubernetes';

/**
 * The StatefulSet a request names, live: one the entity selects (else
 * NotAllowedError), or, without an entity, any of that name (else
 * NotFoundError). What a prune, a restore or a keep acts on, so all judge it
 * alike.
 */
export async function selectedStatefulSet(
  gateway: Pick<KubeGateway, 'readStatefulSet' | 'listStatefulSets'>,
  request: { cluster: string; namespace: string; statefulSet: string },
  target: EntityWorkloadTarget | undefined,
): Promise<V1StatefulSet> {
  const where = `StatefulSet ${request.namespace}/${request.statefulSet} in cluster "${request.cluster}"`;
  if (!target) {
    try {
      return await gateway.readStatefulSet(
        request.namespace,
        request.statefulSet,
      );
    } catch (e) {
      if (e instanceof ClusterRequestError && e.statusCode === 404)
        throw new NotFoundError(`${where} does not exist`);
      throw e;
    }
  }
  const selected = await gateway.listStatefulSets(
    target.labelSelector,
    request.namespace,
  );
  const found = selected.find(s => s.metadata?.name === request.statefulSet);
  if (!found)
    throw new NotAllowedError(
      `${where} is not one of ${target.entityRef}'s (selector ${target.labelSelector})`,
    );
  return found;
}
