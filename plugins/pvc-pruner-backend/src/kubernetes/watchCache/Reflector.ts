import type { LoggerService } from '@backstage/backend-plugin-api';
import type { V1Status } from '@kubernetes/client-node';
import type { KubeResource } from '../apiPath';
import { ClusterRequestError, KubeGateway, WatchEvent } from '../KubeGateway';
import { IndexedStore, NamedObject } from './IndexedStore';

/** A kind the cache holds, cluster-wide, and how its objects are trimmed on arrival. */
export interface WatchedKind<T> {
  /** The plural resource name, as RBAC and messages name it. */
  resource: KubeResource;
  trim: (object: T) => T;
  /**
   * Set for a kind the cache can answer without: what scans do instead when
   * the cluster refuses it. The cache then stays on. Unset, a refusal turns
   * the cache off and scans read the cluster live.
   */
  ifRefused?: string;
}

export interface ReflectorTiming {
  /** The first wait after a failed list or watch; doubled per failure in a row. */
  minBackoffMs: number;
  maxBackoffMs: number;
  /** A watch that ends sooner than this without an error counts as a failure. */
  minWatchMs: number;
}

type KubeObject = NamedObject & { metadata?: { resourceVersion?: string } };
type WatchOutcome = 'expired' | 'ended' | 'stopped';

const isRefused = (e: unknown) =>
  e instanceof ClusterRequestError &&
  (e.statusCode === 401 || e.statusCode === 403);

/**
 * Keeps one kind of one cluster in an {@link IndexedStore}, as client-go's
 * reflector does: lists everything, then watches from the list's
 * resourceVersion with bookmarks. A version the server has forgotten (410,
 * as an answer or as an ERROR event) means a re-list; a watch that ends is
 * resumed from the last version seen; failures back off exponentially. A
 * refusal (401/403) stops it for good: the service account lacks the
 * cluster-wide list/watch, so scans keep reading live.
 */
export class Reflector<T extends KubeObject> {
  private resourceVersion?: string;
  private stopped = false;
  private closeWatch?: () => void;
  private wakeUp?: () => void;
  private sleepTimer?: NodeJS.Timeout;
  private watchingSince?: number;
  private lostAt?: number;
  private refusal?: ClusterRequestError;
  private running?: Promise<void>;
  /** A watch request still connecting (it is closed as soon as it connects if stopped meanwhile). */
  private connecting?: Promise<void>;
  private settleFirstList!: () => void;
  /** Settles once the first list attempt ended (filled the store, or failed), or the reflector stopped. */
  readonly firstListSettled = new Promise<void>(resolve => {
    this.settleFirstList = resolve;
  });

  constructor(
    private readonly gateway: KubeGateway,
    private readonly kind: WatchedKind<T>,
    readonly store: IndexedStore<T>,
    private readonly timing: ReflectorTiming,
    private readonly logger: LoggerService,
  ) {}

  get resource(): string {
    return this.kind.resource;
  }

  /** True once a list has filled the store (it stays filled while re-listing). */
  get synced(): boolean {
    return this.lostAt !== undefined || this.watchingSince !== undefined;
  }

  /** Whether the cache can answer without this kind (see WatchedKind.ifRefused). */
  get optional(): boolean {
    return this.kind.ifRefused !== undefined;
  }

  /** Why the cluster refused this kind's list or watch, if it did. */
  get refused(): ClusterRequestError | undefined {
    return this.refusal;
  }

  /** When the store stopped following the cluster (its watch ended); undefined while it follows. */
  get disconnectedSince(): number | undefined {
    return this.watchingSince === undefined ? this.lostAt : undefined;
  }

  start() {
    this.running ??= this.run();
  }

  /** Ends the watch and any wait; resolves once the loop has let go. */
  async stop() {
    this.stopped = true;
    this.closeWatch?.();
    clearTimeout(this.sleepTimer);
    this.wakeUp?.();
    await this.running;
    await this.connecting;
  }

  private async run() {
    let failures = 0;
    while (!this.stopped) {
      try {
        if (this.resourceVersion === undefined) await this.list();
        if (this.stopped) break;
        const started = Date.now();
        const outcome = await this.watchUntilEnd();
        if (outcome === 'expired') {
          this.resourceVersion = undefined;
          failures = 0;
        } else if (outcome === 'ended') {
          failures =
            Date.now() - started < this.timing.minWatchMs ? failures + 1 : 0;
          if (failures) await this.sleep(this.backoff(failures));
        }
      } catch (e) {
        if (isRefused(e)) {
          this.refusal = e as ClusterRequestError;
          const { resource, ifRefused } = this.kind;
          this.logger.warn(
            `pvc-pruner: the watch cache of cluster "${this.gateway.cluster}" ${
              ifRefused ? `answers without ${resource}` : 'is off'
            } because ${this.refusal.message}; ${
              ifRefused ?? 'scans read the cluster live'
            }. Grant list and watch on ${resource} cluster-wide (rbac/pvc-pruner-rbac.yaml) to use it.`,
          );
          this.stopped = true;
          break;
        }
        failures++;
        this.settleFirstList();
        this.logger.debug(
          `pvc-pruner: ${this.kind.resource} of cluster "${
            this.gateway.cluster
          }": ${(e as Error).message}; retrying`,
        );
        await this.sleep(this.backoff(failures));
      }
    }
    this.markLost();
    this.settleFirstList();
  }

  private async list() {
    const { items, resourceVersion } = await this.gateway.listCollection<T>(
      this.kind.resource,
      this.kind.trim,
    );
    this.store.replace(items);
    this.resourceVersion = resourceVersion;
    // In step with the cluster as of now, until a watch follows it from here.
    this.lostAt = Date.now();
    this.settleFirstList();
  }

  /** Follows the watch into the store until it ends; rejects on a failure other than 410. */
  private watchUntilEnd(): Promise<WatchOutcome> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let stopWatch: (() => void) | undefined;
      const finish = (outcome: WatchOutcome | Error) => {
        if (settled) return;
        settled = true;
        stopWatch?.();
        this.closeWatch = undefined;
        this.markLost();
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      const onEvent = (event: WatchEvent<T>) => {
        if (settled) return;
        if (event.type === 'ERROR') {
          finish(this.errorEvent(event.object as unknown as V1Status));
          return;
        }
        if (event.type === 'ADDED' || event.type === 'MODIFIED') {
          if (this.isOneTooMany(event.object)) {
            // Re-list: that fails on the same limit if the cluster really has this many.
            this.resourceVersion = undefined;
            finish(
              this.gateway.limitExceeded(
                `watch ${this.kind.resource}`,
                `sent more than ${this.gateway.limits.listItems.toLocaleString(
                  'en-US',
                )} objects`,
              ),
            );
            return;
          }
          this.store.upsert(this.kind.trim(event.object));
        } else if (event.type === 'DELETED') this.store.remove(event.object);
        this.resourceVersion =
          event.object.metadata?.resourceVersion ?? this.resourceVersion;
      };
      const onEnd = (error?: ClusterRequestError) => {
        if (!error) finish('ended');
        else finish(error.statusCode === 410 ? 'expired' : error);
      };
      this.closeWatch = () => finish('stopped');
      this.connecting = this.gateway
        .watchCollection<T>(
          this.kind.resource,
          this.resourceVersion!,
          onEvent,
          onEnd,
        )
        .then(
          stop => {
            if (settled) {
              stop();
              return;
            }
            stopWatch = stop;
            this.watchingSince = Date.now();
            this.lostAt = undefined;
          },
          e => finish(e),
        );
    });
  }

  /** An ERROR event: a 410 Status means the version is gone (re-list), anything else a failure. */
  private errorEvent(status: V1Status): WatchOutcome | Error {
    if (status?.code === 410) return 'expired';
    return new ClusterRequestError(
      this.gateway.cluster,
      `cluster "${this.gateway.cluster}" ended the watch of ${
        this.kind.resource
      }: ${status?.code ?? ''} ${status?.reason ?? ''} (${
        status?.message ?? 'no message'
      })`,
      status?.code,
      status?.reason,
    );
  }

  /** A new object beyond what one list may hold: the watch cannot add it without growing without end. */
  private isOneTooMany(object: T): boolean {
    return (
      this.store.size >= this.gateway.limits.listItems &&
      !this.store.get(object.metadata?.namespace, object.metadata?.name ?? '')
    );
  }

  private markLost() {
    if (this.watchingSince !== undefined) this.lostAt = Date.now();
    this.watchingSince = undefined;
  }

  private backoff(failures: number) {
    const { minBackoffMs, maxBackoffMs } = this.timing;
    const ms = Math.min(maxBackoffMs, minBackoffMs * 2 ** (failures - 1));
    // Jitter, so the caches of many replicas do not retry in step.
    return ms * (0.8 + Math.random() * 0.4);
  }

  private sleep(ms: number) {
    return new Promise<void>(resolve => {
      if (this.stopped) {
        resolve();
        return;
      }
      this.wakeUp = resolve;
      this.sleepTimer = setTimeout(resolve, ms);
    });
  }
}
