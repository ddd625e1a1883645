import type { LoggerService } from '@backstage/backend-plugin-api';
import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1StatefulSet,
  V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import { claimNamesOfPod } from '../podClaims';
import type { ClusterStaleness } from 'backstage-plugin-pvc-pruner-common';
import type { KnownAutoscalers } from '../../autoscaling';
import type { KubeResource } from '../apiPath';
import { KubeGateway } from '../KubeGateway';
import { IndexedStore } from './IndexedStore';
import { parseLabelSelector } from './labelSelector';
import { Reflector, ReflectorTiming } from './Reflector';

/**
 * How each kind is trimmed as it arrives: to the fields the orphan rule and
 * the card read, so a cache of 100,000 claims stays small.
 */
export interface WatchCacheTrimmers {
  statefulSet: (sts: V1StatefulSet) => V1StatefulSet;
  claim: (claim: V1PersistentVolumeClaim) => V1PersistentVolumeClaim;
  pod: (pod: V1Pod) => V1Pod;
  volume: (pv: V1PersistentVolume) => V1PersistentVolume;
  autoscaler: (hpa: V2HorizontalPodAutoscaler) => V2HorizontalPodAutoscaler;
}

/**
 * One cluster's StatefulSets, claims, pods, volumes and
 * HorizontalPodAutoscalers, each kept by a {@link Reflector}: claims by
 * namespace and name, pods also by the claims they mount, volumes by name.
 */
export class ClusterCache {
  readonly statefulSets = new IndexedStore<V1StatefulSet>();
  readonly claims = new IndexedStore<V1PersistentVolumeClaim>();
  /** Pods by namespace and name, and (`indexed`) by the claims they mount. */
  readonly pods = new IndexedStore<V1Pod>(claimNamesOfPod);
  readonly volumes = new IndexedStore<V1PersistentVolume>();
  /** HorizontalPodAutoscalers by namespace and name; see {@link autoscalersIn}. */
  readonly autoscalers = new IndexedStore<V2HorizontalPodAutoscaler>();
  private readonly reflectors: Array<Reflector<any>>;
  private readonly autoscalerReflector: Reflector<V2HorizontalPodAutoscaler>;

  constructor(
    readonly gateway: KubeGateway,
    trim: WatchCacheTrimmers,
    timing: ReflectorTiming,
    logger: LoggerService,
  ) {
    const reflect = <T extends object>(
      resource: KubeResource,
      store: IndexedStore<T>,
      pick: (o: T) => T,
      ifRefused?: string,
    ) =>
      new Reflector<T>(
        gateway,
        { resource, trim: pick, ifRefused },
        store,
        timing,
        logger,
      );
    // A cluster bound to an RBAC role from before pvc-pruner read them: claims they could bring back are kept.
    this.autoscalerReflector = reflect(
      'horizontalpodautoscalers',
      this.autoscalers,
      trim.autoscaler,
      'every claim an autoscaler could bring back is kept, not offered',
    );
    this.reflectors = [
      reflect('statefulsets', this.statefulSets, trim.statefulSet),
      reflect('persistentvolumeclaims', this.claims, trim.claim),
      reflect('pods', this.pods, trim.pod),
      reflect('persistentvolumes', this.volumes, trim.volume),
      this.autoscalerReflector,
    ];
  }

  start() {
    this.reflectors.forEach(r => r.start());
  }

  async stop() {
    await Promise.all(this.reflectors.map(r => r.stop()));
  }

  /** Every kind is listed, and none was refused that the cache cannot answer without: scans may read from here. */
  get ready(): boolean {
    return this.reflectors.every(r => (r.refused ? r.optional : r.synced));
  }

  /** Changes whenever {@link autoscalersIn} would answer differently for the namespace. */
  autoscalersGeneration(namespace: string): number {
    return this.autoscalerReflector.refused
      ? -1
      : this.autoscalers.generation(namespace);
  }

  /** The namespace's HorizontalPodAutoscalers, or why the cluster refused them to the cache. */
  autoscalersIn(namespace: string): KnownAutoscalers {
    const refusal = this.autoscalerReflector.refused;
    if (refusal) return { unreadable: refusal.message };
    return [...this.autoscalers.inNamespace(namespace).values()];
  }

  /** Resolves with {@link ready} once every kind is listed (or refused), or when `timeoutMs` has passed. */
  async untilReady(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.reflectors.map(r => r.firstListSettled)),
      new Promise(resolve => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return this.ready;
  }

  /** Undefined while every watch is connected. */
  staleness(now = Date.now()): ClusterStaleness | undefined {
    // A refused kind the cache answers without is not followed, not behind.
    const lost = this.reflectors.filter(
      r => r.disconnectedSince !== undefined && !r.refused,
    );
    if (lost.length === 0) return undefined;
    const since = Math.min(...lost.map(r => r.disconnectedSince!));
    return {
      secondsSinceSync: Math.max(0, Math.round((now - since) / 1000)),
      disconnectedWatches: lost.map(r => r.resource),
    };
  }

  /**
   * The StatefulSets a label selector matches, in one namespace or all;
   * undefined for a selector this cache cannot evaluate (the API server then
   * answers it).
   */
  statefulSetsMatching(
    labelSelector: string,
    namespace?: string,
  ): V1StatefulSet[] | undefined {
    const matches = parseLabelSelector(labelSelector);
    if (!matches) return undefined;
    const candidates = namespace
      ? this.statefulSets.inNamespace(namespace).values()
      : this.statefulSets.all();
    return [...candidates].filter(s => matches(s.metadata?.labels));
  }
}
