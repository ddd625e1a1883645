import type { V1StatefulSet } from '@kubernetes/client-node';
import { parseLabelSelector, singleEqualityOf } from '../kubernetes';
import { WorkloadEntity } from './WorkloadEntity';

type LabelMatcher = NonNullable<ReturnType<typeof parseLabelSelector>>;

const byRef = (a: WorkloadEntity, b: WorkloadEntity) =>
  a.entityRef < b.entityRef ? -1 : 1;

/**
 * Which catalog entities claim a StatefulSet: every entity whose Kubernetes
 * annotations (label selector or kubernetes-id, namespace, cluster) map it
 * to the StatefulSet, as Backstage's Kubernetes plugin would. Built once per
 * catalog read; selectors of one `key=value` (as `kubernetes-id` makes) are
 * looked up by label, others matched one by one.
 *
 * A selector it cannot parse matches every StatefulSet in its entity's
 * scope: pvc-pruner deletes, so an entity that might claim a StatefulSet is
 * taken to claim it (its refusals then name it, so it can be fixed).
 */
export class ClaimantIndex {
  private readonly byLabel = new Map<string, WorkloadEntity[]>();
  private readonly matched: Array<{
    entity: WorkloadEntity;
    matches: LabelMatcher;
  }> = [];
  private readonly byEntityRef = new Map<string, WorkloadEntity>();

  constructor(
    readonly entities: readonly WorkloadEntity[],
    onUnreadableSelector: (entity: WorkloadEntity) => void = () => {},
  ) {
    for (const entity of entities) {
      this.byEntityRef.set(entity.entityRef, entity);
      const key = singleEqualityOf(entity.labelSelector);
      if (key !== undefined) {
        const list = this.byLabel.get(key);
        if (list) list.push(entity);
        else this.byLabel.set(key, [entity]);
        continue;
      }
      let matches = parseLabelSelector(entity.labelSelector);
      if (!matches) {
        onUnreadableSelector(entity);
        matches = () => true;
      }
      this.matched.push({ entity, matches });
    }
  }

  get(entityRef: string): WorkloadEntity | undefined {
    return this.byEntityRef.get(entityRef);
  }

  /** The entities claiming this StatefulSet of this cluster, by entity ref. */
  claimantsOf(cluster: string, statefulSet: V1StatefulSet): WorkloadEntity[] {
    const labels = statefulSet.metadata?.labels ?? {};
    const namespace = statefulSet.metadata?.namespace;
    const found = new Set<WorkloadEntity>();
    for (const [key, value] of Object.entries(labels))
      for (const entity of this.byLabel.get(`${key}=${value}`) ?? [])
        found.add(entity);
    for (const { entity, matches } of this.matched)
      if (matches(labels)) found.add(entity);
    return [...found]
      .filter(
        e =>
          (!e.cluster || e.cluster === cluster) &&
          (!e.namespace || e.namespace === namespace),
      )
      .sort(byRef);
  }
}
