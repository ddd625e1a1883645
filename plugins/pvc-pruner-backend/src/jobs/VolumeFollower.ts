import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { KubeGateway, KubeResource } from '../kubernetes';

type Outcome<T> = { done: boolean; object?: T };

interface WaitOptions<T> {
  gateway: KubeGateway;
  resource: KubeResource;
  namespace?: string;
  name: string;
  read: () => Promise<T | undefined>;
  isDone: (object: T | undefined) => boolean;
  timeoutMs: number;
  /** Ends the wait early, undecided (the instance is shutting down). */
  signal?: AbortSignal;
}

/** Pause before watching again after a watch that ended early, so a failing server is not hammered. */
const REWATCH_DELAY_MS = 500;

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/**
 * Watches from `from`'s resourceVersion until `isDone`, the watch ending
 * (dropped, or expired with an ERROR event) or `ms` passing.
 */
function watchOnce<T extends { metadata?: { resourceVersion?: string } }>(
  options: WaitOptions<T>,
  from: T | undefined,
  ms: number,
): Promise<Outcome<T> & { ended: boolean }> {
  return new Promise(resolve => {
    let latest = from;
    let settled = false;
    let stop: () => void = () => {};
    const cleanups: Array<() => void> = [];
    const settle = (done: boolean, ended: boolean) => {
      if (settled) return;
      settled = true;
      cleanups.forEach(cleanup => cleanup());
      stop();
      resolve({ done, object: latest, ended });
    };
    const timer = setTimeout(() => settle(false, false), ms);
    cleanups.push(() => clearTimeout(timer));
    const onAbort = () => settle(false, false);
    options.signal?.addEventListener('abort', onAbort);
    cleanups.push(() => options.signal?.removeEventListener('abort', onAbort));
    options.gateway
      .watchOne<T>(
        options.resource,
        { namespace: options.namespace, name: options.name },
        from?.metadata?.resourceVersion,
        event => {
          if (event.type === 'BOOKMARK' || event.type === 'ERROR') return;
          latest = event.type === 'DELETED' ? undefined : event.object;
          if (options.isDone(latest)) settle(true, false);
        },
        () => settle(false, true),
      )
      .then(
        s => {
          stop = s;
          if (settled) s();
        },
        () => settle(false, true),
      );
  });
}

/**
 * Waits until `isDone(object)` holds for one object (undefined = deleted):
 * reads it, then watches it from the resourceVersion read, until done or the
 * timeout. A watch that ends early (dropped, or too old after a compaction)
 * is followed by a fresh read and a new watch, so only the timeout decides
 * "not yet". Watching, not polling, keeps API requests per claim constant.
 */
async function waitForObject<
  T extends { metadata?: { resourceVersion?: string } },
>(options: WaitOptions<T>): Promise<Outcome<T>> {
  const deadline = performance.now() + options.timeoutMs;
  let latest = await options.read();
  while (!options.isDone(latest)) {
    const remaining = deadline - performance.now();
    if (remaining <= 0 || options.signal?.aborted) break;
    const watched = await watchOnce(options, latest, remaining);
    if (!watched.ended) return watched;
    await sleep(Math.min(REWATCH_DELAY_MS, remaining));
    latest = await options.read().catch(() => watched.object);
  }
  return { done: options.isDone(latest), object: latest };
}

export type VolumeFate = 'deleted' | 'released' | 'unknown';

/** What became of a claim whose deletion was accepted: gone, or still Terminating, held by these finalizers. */
export type ClaimFate = { gone: true } | { gone: false; finalizers: string[] };

/** Follows a deleted claim until it is gone, then its volume until deleted (Delete) or Released (Retain). */
export class VolumeFollower {
  constructor(private readonly timeoutMs: number) {}

  /**
   * Follows a claim whose deletion was accepted until it is gone; if it is
   * still there at the timeout (or on `signal`), says which finalizers hold it.
   */
  async claimGone(
    gateway: KubeGateway,
    namespace: string,
    name: string,
    signal?: AbortSignal,
  ): Promise<ClaimFate> {
    const outcome = await waitForObject<V1PersistentVolumeClaim>({
      signal,
      gateway,
      resource: 'persistentvolumeclaims',
      namespace,
      name,
      read: () => gateway.readClaim(namespace, name),
      isDone: claim => claim === undefined,
      timeoutMs: this.timeoutMs,
    });
    return outcome.done
      ? { gone: true }
      : { gone: false, finalizers: outcome.object?.metadata?.finalizers ?? [] };
  }

  async volumeFate(
    gateway: KubeGateway,
    volumeName: string,
    reclaimPolicy: string | undefined,
    signal?: AbortSignal,
  ): Promise<VolumeFate> {
    const outcome = await waitForObject<V1PersistentVolume>({
      signal,
      gateway,
      resource: 'persistentvolumes',
      name: volumeName,
      read: () => gateway.readVolume(volumeName),
      // Under Delete, Released is a step on the way to deletion; Failed means the
      // disk could not be reclaimed and stays, as under Retain.
      isDone: pv =>
        pv === undefined ||
        pv.status?.phase === 'Failed' ||
        (reclaimPolicy !== 'Delete' && pv.status?.phase === 'Released'),
      timeoutMs: this.timeoutMs,
    });
    if (!outcome.done) return 'unknown';
    return outcome.object === undefined ? 'deleted' : 'released';
  }
}
