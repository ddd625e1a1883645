import type { LoggerService } from '@backstage/backend-plugin-api';
import { KubeGateway } from '../KubeGateway';
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
  private readonly caches = new Map<
    string,
    { gateway: KubeGateway; cache: ClusterCache }
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
   * The cache of the gateway's cluster if it is ready to answer; otherwise
   * undefined (the caller reads live), and the cache is started if it was
   * not. A gateway that carries a user's token gets none: that user's RBAC
   * must apply to what they see, so their scans always read live.
   */
  ready(gateway: KubeGateway): ClusterCache | undefined {
    const cache = this.started(gateway);
    return cache?.ready ? cache : undefined;
  }

  /**
   * Like {@link ready}, but a cache an earlier call started and that is
   * still listing is waited for, up to `syncWaitMs`. The call that starts a
   * cache gets undefined at once: that scan reads live.
   */
  async whenReady(gateway: KubeGateway): Promise<ClusterCache | undefined> {
    const existed = this.caches.get(gateway.cluster)?.gateway === gateway;
    const cache = this.started(gateway);
    if (!cache || cache.ready || !existed) return this.ready(gateway);
    return (await cache.untilReady(this.options.syncWaitMs))
      ? cache
      : undefined;
  }

  private started(gateway: KubeGateway): ClusterCache | undefined {
    if (this.stopped || gateway.actsForUser) return undefined;
    const known = this.caches.get(gateway.cluster);
    if (known?.gateway === gateway) return known.cache;
    // The cluster's details changed (a catalog or GKE locator's refresh): its gateway is new.
    void known?.cache.stop();
    const cache = new ClusterCache(
      gateway,
      this.options.trim,
      { ...DEFAULT_TIMING, ...this.options.timing },
      this.options.logger,
    );
    this.caches.set(gateway.cluster, { gateway, cache });
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
