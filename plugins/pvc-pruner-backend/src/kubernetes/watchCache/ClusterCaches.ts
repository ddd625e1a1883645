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
      timing?: Partial<ReflectorTiming>;
    },
  ) {}

  /**
   * The cluster's cache if it is ready to answer; otherwise undefined (the
   * caller reads live), and the cache is started if it was not.
   */
  ready(cluster: string): ClusterCache | undefined {
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
    return cache.ready ? cache : undefined;
  }

  /** Ends every watch and retry timer (the plugin's shutdown hook). */
  async stop() {
    this.stopped = true;
    await Promise.all([...this.caches.values()].map(c => c.stop()));
    this.caches.clear();
  }
}
