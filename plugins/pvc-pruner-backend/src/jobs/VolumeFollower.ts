import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { KubeGateway, KubeResource } from '../kubernetes';

type Outcome<T> = { done: true; object?: T } | { done: false; object?: T };

/**
 * Waits until `isDone(object)` holds for one object (undefined = deleted):
 * reads it, then watches it from the resourceVersion read, until done or the
 * timeout. Watching, not polling, keeps API requests per claim constant.
 */
async function waitForObject<
  T extends { metadata?: { resourceVersion?: string } },
>(options: {
  gateway: KubeGateway;
  resource: KubeResource;
  namespace?: string;
  name: string;
  read: () => Promise<T | undefined>;
  isDone: (object: T | undefined) => boolean;
  timeoutMs: number;
}): Promise<Outcome<T>> {
  const first = await options.read();
  if (options.isDone(first)) return { done: true, object: first };
  return new Promise(resolve => {
    let latest = first;
    let settled = false;
    let stop: () => void = () => {};
    const timers: NodeJS.Timeout[] = [];
    const settle = (outcome: Outcome<T>) => {
      if (settled) return;
      settled = true;
      timers.forEach(clearTimeout);
      stop();
      resolve(outcome);
    };
    timers.push(
      setTimeout(
        () => settle({ done: false, object: latest }),
        options.timeoutMs,
      ),
    );
    options.gateway
      .watchOne<T>(
        options.resource,
        { namespace: options.namespace, name: options.name },
        first?.metadata?.resourceVersion,
        event => {
          if (event.type === 'BOOKMARK' || event.type === 'ERROR') return;
          latest = event.type === 'DELETED' ? undefined : event.object;
          if (options.isDone(latest)) settle({ done: true, object: latest });
        },
        // The watch ended early: one more read decides.
        () =>
          void options.read().then(
            o => settle({ done: options.isDone(o), object: o }),
            () => settle({ done: false, object: latest }),
          ),
      )
      .then(
        s => {
          stop = s;
          if (settled) s();
        },
        () => settle({ done: false, object: latest }),
      );
  });
}

export type VolumeFate = 'deleted' | 'released' | 'unknown';

/** Follows a deleted claim until it is gone, then its volume until deleted (Delete) or Released (Retain). */
export class VolumeFollower {
  constructor(private readonly timeoutMs: number) {}

  async claimGone(
    gateway: KubeGateway,
    namespace: string,
    name: string,
  ): Promise<boolean> {
    const outcome = await waitForObject<V1PersistentVolumeClaim>({
      gateway,
      resource: 'persistentvolumeclaims',
      namespace,
      name,
      read: () => gateway.readClaim(namespace, name),
      isDone: claim => claim === undefined,
      timeoutMs: this.timeoutMs,
    });
    return outcome.done;
  }

  async volumeFate(
    gateway: KubeGateway,
    volumeName: string,
    reclaimPolicy: string | undefined,
  ): Promise<VolumeFate> {
    const outcome = await waitForObject<V1PersistentVolume>({
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
