import type { V1StatefulSet } from '@kubernetes/client-node';
import { StatefulSetOrphans } from 'backstage-plugin-pvc-pruner-common';
import { ClusterCache } from '../kubernetes';
import { classifyInSnapshot, NamespaceSnapshot } from './orphanRule';

/**
 * The orphan rule over a cluster's watch cache. Many viewers of one card ask
 * the same question every 15 s, so the snapshot of a namespace and each
 * StatefulSet's report are kept until what they were made from changes: the
 * namespace's claims or pods, the StatefulSet, or any volume.
 */
export class CachedClassifier {
  private readonly snapshots = new Map<
    string,
    { generation: string; snapshot: NamespaceSnapshot }
  >();
  private readonly reports = new Map<
    string,
    { generation: string; report: StatefulSetOrphans }
  >();

  classify(cache: ClusterCache, sts: V1StatefulSet): StatefulSetOrphans {
    const namespace = sts.metadata?.namespace ?? '';
    const snapshotGeneration = `${cache.claims.generation(
      namespace,
    )}/${cache.pods.generation(namespace)}`;
    const generation = `${snapshotGeneration}/${cache.volumes.generation('')}/${
      sts.metadata?.resourceVersion
    }`;
    const key = `${cache.cluster}/${namespace}/${sts.metadata?.name}`;
    const kept = this.reports.get(key);
    if (kept?.generation === generation) return kept.report;
    const report = classifyInSnapshot(
      sts,
      this.snapshot(cache, namespace, snapshotGeneration),
      cache.volumes.inNamespace(''),
    );
    this.reports.set(key, { generation, report });
    return report;
  }

  private snapshot(cache: ClusterCache, namespace: string, generation: string) {
    const key = `${cache.cluster}/${namespace}`;
    const kept = this.snapshots.get(key);
    if (kept?.generation === generation) return kept.snapshot;
    const snapshot = NamespaceSnapshot.fromIndex(
      namespace,
      cache.claims.inNamespace(namespace),
      cache.pods.indexed(namespace),
    );
    this.snapshots.set(key, { generation, snapshot });
    return snapshot;
  }
}
