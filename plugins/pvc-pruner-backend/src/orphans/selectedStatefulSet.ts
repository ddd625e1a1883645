import type { V1StatefulSet } from '@kubernetes/client-node';
import { NotAllowedError, NotFoundError } from '@backstage/errors';
import { ClusterRequestError, KubeGateway } from '../kubernetes';
import type { EntityWorkloadTarget } from './EntityWorkloads';

/** A StatefulSet a request names: where it is, and its name. */
export interface StatefulSetAddress {
  cluster: string;
  namespace: string;
  statefulSet: string;
}

/**
 * Refuses (NotAllowedError) a cluster or namespace other than the one the
 * entity's annotations pin, before any cluster is asked.
 */
export function assertWithinTarget(
  target: EntityWorkloadTarget | undefined,
  address: Pick<StatefulSetAddress, 'cluster' | 'namespace'>,
): void {
  if (target?.cluster && target.cluster !== address.cluster)
    throw new NotAllowedError(
      `Entity ${target.entityRef} maps to cluster "${target.cluster}", not "${address.cluster}"`,
    );
  if (target?.namespace && target.namespace !== address.namespace)
    throw new NotAllowedError(
      `Entity ${target.entityRef} maps to namespace "${target.namespace}", not "${address.namespace}"`,
    );
}

/**
 * The StatefulSet a request acts on, read live: one the entity's selector
 * selects in that namespace (NotAllowedError otherwise), or, without an
 * entity, any of that name (NotFoundError when there is none). What a prune
 * and a restore both act on.
 */
export async function selectedStatefulSet(
  gateway: Pick<KubeGateway, 'listStatefulSets' | 'readStatefulSet'>,
  address: StatefulSetAddress,
  target: EntityWorkloadTarget | undefined,
): Promise<V1StatefulSet> {
  const { cluster, namespace, statefulSet } = address;
  const where = `StatefulSet ${namespace}/${statefulSet} in cluster "${cluster}"`;
  if (!target) {
    try {
      return await gateway.readStatefulSet(namespace, statefulSet);
    } catch (e) {
      if (e instanceof ClusterRequestError && e.statusCode === 404)
        throw new NotFoundError(`${where} does not exist`);
      throw e;
    }
  }
  const selected = await gateway.listStatefulSets(
    target.labelSelector,
    namespace,
  );
  const found = selected.find(s => s.metadata?.name === statefulSet);
  if (!found)
    throw new NotAllowedError(
      `${where} is not one of ${target.entityRef}'s (selector ${target.labelSelector})`,
    );
  return found;
}
