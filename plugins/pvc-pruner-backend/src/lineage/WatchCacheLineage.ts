import type { SchedulerService } from '@backstage/backend-plugin-api';
import type { ClusterCache, ClusterCaches } from '../kubernetes';
import { NamespaceSnapshot } from '../orphans/orphanRule';
import type { LineageRecorder, SeenStatefulSet } from './LineageRecorder';

export const WATCH_CACHE_LINEAGE_TASK_ID =
  'pvc-pruner-lineage-from-watch-caches';

/**
 * Records the lineage of every StatefulSet each running watch cache holds,
 * every few minutes, whether or not anyone scans: a StatefulSet created and
 * deleted between two looks at its card still leaves a record of whose its
 * claims were. Each replica sweeps its own caches (`scope: 'local'`); the
 * store writes only what changed, or what it last wrote an hour ago.
 */
export class WatchCacheLineage {
  constructor(
    private readonly deps: {
      caches: Pick<ClusterCaches, 'readyCaches'>;
      recorder: Pick<LineageRecorder, 'saw'>;
    },
  ) {}

  /** Sweeps every `minutes` (5 unless told), the first a minute after start. */
  static async schedule(
    scheduler: SchedulerService,
    deps: WatchCacheLineage['deps'],
    minutes = 5,
  ): Promise<WatchCacheLineage> {
    const sweep = new WatchCacheLineage(deps);
    await scheduler.scheduleTask({
      id: WATCH_CACHE_LINEAGE_TASK_ID,
      scope: 'local',
      frequency: { minutes },
      timeout: { minutes },
      initialDelay: { minutes: 1 },
      fn: () => sweep.sweep(),
    });
    return sweep;
  }

  async sweep(): Promise<void> {
    for (const { cluster, cache } of this.deps.caches.readyCaches())
      await this.deps.recorder.saw(cluster, seenIn(cache));
  }
}

/** Every StatefulSet of the cache, with its namespace as the cache has it (each namespace indexed once). */
function seenIn(cache: ClusterCache): SeenStatefulSet[] {
  const snapshots = new Map<string, NamespaceSnapshot>();
  return [...cache.statefulSets.all()].map(statefulSet => {
    const namespace = statefulSet.metadata?.namespace ?? '';
    let snapshot = snapshots.get(namespace);
    if (!snapshot) {
      snapshot = NamespaceSnapshot.fromIndex(
        namespace,
        cache.claims.inNamespace(namespace),
        cache.pods.indexed(namespace),
        cache.statefulSets.inNamespace(namespace).values(),
      );
      snapshots.set(namespace, snapshot);
    }
    return { statefulSet, snapshot };
  });
}
