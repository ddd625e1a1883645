import type { V1StatefulSet } from '@kubernetes/client-node';
import {
  parseLabelSelector,
  requiredKeyOf,
  singleEqualityOf,
} from '../kubernetes';
import { WorkloadEntity } from './WorkloadEntity';

type LabelMatcher = NonNullable<ReturnType<typeof parseLabelSelector>>;

interface Matched {
  entity: WorkloadEntity;
  matches: LabelMatcher;
}

/**
 * More entities than this claiming one StatefulSet is taken as an error in
 * the catalog (a few catch-all selectors, say): such a StatefulSet is shown
 * to and pruned by nobody until it is fixed, so over-claiming cannot make
 * every request check a thousand permissions.
 */
export const MAX_CLAIMANTS = 20;

const byRef = (a: WorkloadEntity, b: WorkloadEntity) =>
  a.entityRef < b.entityRef ? -1 : 1;

/**
 * Which catalog entities claim a StatefulSet: every entity whose Kubernetes
 * annotations (label selector or kubernetes-id, namespace, cluster) map it
 * to the StatefulSet, as Backstage's Kubernetes plugin would. Built once per
 * catalog read; selectors of one `key=value` (as `kubernetes-id` makes) are
 * looked up by label, others tried only on StatefulSets that carry a label
 * they require, and those that require none (negations, such as a
 * catch-all) on every StatefulSet.
 *
 * A selector it cannot parse matches every StatefulSet in its entity's
 * scope: pvc-pruner deletes, so an entity that might claim a StatefulSet is
 * taken to claim it (its refusals then name it, so it can be fixed).
 */
export class ClaimantIndex {
  private readonly byLabel = new Map<string, WorkloadEntity[]>();
  /** Matchers by a label key every StatefulSet they match carries. */
  private readonly byRequiredKey = new Map<string, Matched[]>();
  /** Matchers that require no label: tried on every StatefulSet. */
  private readonly unkeyed: Matched[] = [];
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
      const required = requiredKeyOf(entity.labelSelector);
      if (required === undefined) {
        this.unkeyed.push({ entity, matches });
        continue;
      }
      const list = this.byRequiredKey.get(required);
      if (list) list.push({ entity, matches });
      else this.byRequiredKey.set(required, [{ entity, matches }]);
    }
  }

  get(entityRef: string): WorkloadEntity | undefined {
    return this.byEntityRef.get(entityRef);
  }

  /**
   * The entities claiming this StatefulSet of this cluster, by entity ref;
   * at most {@link MAX_CLAIMANTS} + 1 of them (more is a catalog error the
   * callers refuse, so they need not be counted).
   */
  claimantsOf(cluster: string, statefulSet: V1StatefulSet): WorkloadEntity[] {
    const labels = statefulSet.metadata?.labels ?? {};
    const namespace = statefulSet.metadata?.namespace;
    const found = new Set<WorkloadEntity>();
    for (const entity of this.candidates(labels)) {
      if (
        (entity.cluster && entity.cluster !== cluster) ||
        (entity.namespace && entity.namespace !== namespace)
      )
        continue;
      found.add(entity);
      if (found.size > MAX_CLAIMANTS) break;
    }
    return [...found].sort(byRef);
  }

  /** The entities whose selectors match these labels, scope aside, found as cheaply as the index allows. */
  private *candidates(
    labels: Record<string, string>,
  ): Generator<WorkloadEntity> {
    for (const [key, value] of Object.entries(labels)) {
      yield* this.byLabel.get(`${key}=${value}`) ?? [];
      for (const { entity, matches } of this.byRequiredKey.get(key) ?? [])
        if (matches(labels)) yield entity;
    }
    for (const { entity, matches } of this.unkeyed)
      if (matches(labels)) yield entity;
  }
}
