import type { V1StatefulSet } from '@kubernetes/client-node';
import { StatefulSetOrphans } from 'backstage-plugin-pvc-pruner-common';
import { ClusterCache } from '../kubernetes';
import {
  classifyInSnapshot,
  NamespaceSnapshot,
  PausedStatefulSets,
} from './orphanRule';

/**
 * The orphan rule over a cluster's watch cache. Many viewers of one card ask
 * the same question every 15 s, so the snapshot of a namespace and each
 * StatefulSet's report are kept until what they were made from changes: the
 * namespace's claims, pods or HorizontalPodAutoscalers, the StatefulSet, or
 * any volume.
 */
export class CachedClassifier {
  constructor(private readonly pausedStatefulSets: PausedStatefulSets) {}

  /** By cache (a cluster replaced by another of its name has a new cache), then namespace. */
  private readonly snapshots = new WeakMap<
    ClusterCache,
    Map<string, { generation: string; snapshot: NamespaceSnapshot }>
  >();
  /**
   * By the cached StatefulSet object: the cache replaces it whenever the
   * StatefulSet changes, so a report is kept only as long as the object,
   * with the generations of the claims, pods and volumes it was made from.
   */
  private readonly reports = new WeakMap<
    V1StatefulSet,
    {
      claims: number;
      pods: number;
      volumes: number;
      autoscalers: number;
      statefulSets: number;
      report: StatefulSetOrphans;
    }
  >();

  classify(cache: ClusterCache, sts: V1StatefulSet): StatefulSetOrphans {
    const namespace = sts.metadata?.namespace ?? '';
    const claims = cache.claims.generation(namespace);
    const pods = cache.pods.generation(namespace);
    const volumes = cache.volumes.generation('');
    const autoscalers = cache.autoscalersGeneration(namespace);
    // The namespace's other StatefulSets decide whose a claim's name may be.
    const statefulSets = cache.statefulSets.generation(namespace);
    const kept = this.reports.get(sts);
    if (
      kept &&
      kept.claims === claims &&
      kept.pods === pods &&
      kept.volumes === volumes &&
      kept.autoscalers === autoscalers &&
      kept.statefulSets === statefulSets
    )
      return kept.report;
    const report = classifyInSnapshot(
      sts,
      this.snapshotOf(cache, namespace),
      cache.volumes.inNamespace(''),
      {
        autoscalers: cache.autoscalersIn(namespace),
        pausedStatefulSets: this.pausedStatefulSets,
      },
    );
    this.reports.set(sts, {
      claims,
      pods,
      volumes,
      autoscalers,
      statefulSets,
      report,
    });
    return report;
  }

  /** The namespace as the rule reads it, kept until its claims, pods or StatefulSets change. */
  snapshotOf(cache: ClusterCache, namespace: string): NamespaceSnapshot {
    const generation = `${cache.claims.generation(
      namespace,
    )}/${cache.pods.generation(namespace)}/${cache.statefulSets.generation(
      namespace,
    )}`;
    let ofCache = this.snapshots.get(cache);
    if (!ofCache) {
      ofCache = new Map();
      this.snapshots.set(cache, ofCache);
    }
    const kept = ofCache.get(namespace);
    if (kept?.generation === generation) return kept.snapshot;
    const snapshot = NamespaceSnapshot.fromIndex(
      namespace,
      cache.claims.inNamespace(namespace),
      cache.pods.indexed(namespace),
      cache.statefulSets.inNamespace(namespace).values(),
    );
    ofCache.set(namespace, { generation, snapshot });
    return snapshot;
  }
}
