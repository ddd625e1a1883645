import type { LoggerService } from '@backstage/backend-plugin-api';
import { KubeGateways } from '../KubeGateways';
import { ClusterCache, WatchCacheTrimmers } from './ClusterCache';
import { ReflectorTiming } from './Reflector';

/** client-go's reflector backs off from 800 ms to 30 s; a watch under a second is a failure. */
const DEFAULT_TIMING: ReflectorTiming = {
  minBackoffMs: 800,
  maxBackoffMs: 30000,
  minWatchMs: 1000,
};

/**
 * A shared watch cache per configured cluster, started on first use, so
 * that any number of card viewers cost the API server one list+watch per
 * kind instead of a scan each.
 */
export class ClusterCaches {
  private readonly caches = new Map<string, ClusterCache>();
  private stopped = false;

  constructor(
    private readonly gateways: KubeGateways,
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
   * caller reads live), and the cache is started if it was not.
   */
  ready(cluster: string): ClusterCache | undefined {
    const cache = this.started(cluster);
    return cache?.ready ? cache : undefined;
  }

  /**
   * Like {@link ready}, but a cache an earlier call started and that is
   * still listing is waited for, up to `syncWaitMs`. The call that starts a
   * cache gets undefined at once: that scan reads live.
   */
  async whenReady(cluster: string): Promise<ClusterCache | undefined> {
    const existed = this.caches.has(cluster);
    const cache = this.started(cluster);
    if (!cache || cache.ready || !existed) return this.ready(cluster);
    return (await cache.untilReady(this.options.syncWaitMs))
      ? cache
      : undefined;
  }

  private started(cluster: string): ClusterCache | undefined {
    if (this.stopped) return undefined;
    let cache = this.caches.get(cluster);
    if (!cache) {
      let gateway;
      try {
        gateway = this.gateways.for(cluster);
      } catch {
        // Unknown or unusable cluster: the live read reports why.
        return undefined;
      }
      cache = new ClusterCache(
        gateway,
        this.options.trim,
        { ...DEFAULT_TIMING, ...this.options.timing },
        this.options.logger,
      );
      this.caches.set(cluster, cache);
      cache.start();
    }
    return cache;
  }

  /** Ends every watch and retry timer (the plugin's shutdown hook). */
  async stop() {
    this.stopped = true;
    await Promise.all([...this.caches.values()].map(c => c.stop()));
    this.caches.clear();
  }
}
