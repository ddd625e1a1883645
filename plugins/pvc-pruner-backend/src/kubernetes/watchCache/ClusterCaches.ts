import type { LoggerService } from '@backstage/backend-plugin-api';
import { KubeGateway } from '../KubeGateway';
import type { LocatedCluster } from '../LocatedCluster';
import { ClusterCache, WatchCacheTrimmers } from './ClusterCache';
import { ReflectorTiming } from './Reflector';

/** client-go's reflector backs off from 800 ms to 30 s; a watch under a second is a failure. */
const DEFAULT_TIMING: ReflectorTiming = {
  minBackoffMs: 800,
  maxBackoffMs: 30000,
  minWatchMs: 1000,
};

/** Whether a read may start a cache for a cluster that has none yet. */
export interface CacheUse {
  /**
   * False for reads that must not start one (the fleet page for a catalog
   * cluster): they get a cache only if one already runs.
   */
  start: boolean;
}

/**
 * A shared watch cache per located cluster, started on first use, so that
 * any number of card viewers cost the API server one list+watch per kind
 * instead of a scan each. Caches are kept by the place a cluster was found
 * and the identity it had: a cluster whose URL, CA or credentials change
 * gets a new cache, and the old one is stopped, never read again.
 */
export class ClusterCaches {
  private readonly caches = new Map<
    string,
    { identity: string; name: string; cache: ClusterCache }
  >();
  private stopped = false;

  constructor(
    private readonly options: {
      trim: WatchCacheTrimmers;
      logger: LoggerService;
      /**
       * How long a scan waits for a cache that an earlier scan started and
       * that is still listing, rather than add a live scan's load to the API
       * server while the cache reads the same objects.
       */
      syncWaitMs: number;
      timing?: Partial<ReflectorTiming>;
    },
  ) {}

  /**
   * The cluster's cache if it is ready to answer; otherwise undefined (the
   * caller reads live), and the cache is started if it was not and `use`
   * allows. `gateway` is the cluster's shared gateway. A gateway that
   * carries a user's token gets none: that user's RBAC must apply to what
   * they see, so their scans always read live.
   */
  ready(
    cluster: LocatedCluster,
    gateway: KubeGateway,
    use: CacheUse = { start: true },
  ): ClusterCache | undefined {
    const cache = this.started(cluster, gateway, use);
    return cache?.ready ? cache : undefined;
  }

  /**
   * Like {@link ready}, but a cache an earlier call started and that is
   * still listing is waited for, up to `syncWaitMs`. The call that starts a
   * cache gets undefined at once: that scan reads live.
   */
  async whenReady(
    cluster: LocatedCluster,
    gateway: KubeGateway,
    use: CacheUse = { start: true },
  ): Promise<ClusterCache | undefined> {
    const existed =
      this.caches.get(cluster.place)?.identity === cluster.identity;
    const cache = this.started(cluster, gateway, use);
    if (!cache || cache.ready || !existed)
      return cache?.ready ? cache : undefined;
    return (await cache.untilReady(this.options.syncWaitMs))
      ? cache
      : undefined;
  }

  /** The caches that are ready to answer, with their cluster's name; none is started. */
  readyCaches(): Array<{ cluster: string; cache: ClusterCache }> {
    return [...this.caches.values()]
      .filter(c => c.cache.ready)
      .map(c => ({ cluster: c.name, cache: c.cache }));
  }

  /** Stops the caches of clusters that are no longer located (a Resource removed from the catalog). */
  retain(clusters: LocatedCluster[]) {
    const places = new Set(clusters.map(c => c.place));
    for (const [place, { cache }] of this.caches)
      if (!places.has(place)) {
        this.caches.delete(place);
        void cache.stop();
      }
  }

  private started(
    cluster: LocatedCluster,
    gateway: KubeGateway,
    use: CacheUse,
  ): ClusterCache | undefined {
    if (this.stopped || gateway.actsForUser) return undefined;
    const known = this.caches.get(cluster.place);
    if (known?.identity === cluster.identity) return known.cache;
    // The cluster changed (a catalog or GKE locator's refresh): what its old cache holds is another cluster's.
    if (known) {
      this.caches.delete(cluster.place);
      void known.cache.stop();
    }
    if (!use.start) return undefined;
    const cache = new ClusterCache(
      gateway,
      this.options.trim,
      { ...DEFAULT_TIMING, ...this.options.timing },
      this.options.logger,
    );
    this.caches.set(cluster.place, {
      identity: cluster.identity,
      name: cluster.name,
      cache,
    });
    cache.start();
    return cache;
  }

  /** Ends every watch and retry timer (the plugin's shutdown hook). */
  async stop() {
    this.stopped = true;
    await Promise.all([...this.caches.values()].map(c => c.cache.stop()));
    this.caches.clear();
  }
}
