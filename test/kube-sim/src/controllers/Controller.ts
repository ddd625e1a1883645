import { SimClock } from '../clock';
import { ObjectStore } from '../store';
import { StoreEvent } from '../types';

export interface ControllerContext {
  store: ObjectStore;
  clock: SimClock;
}

/**
 * A level-triggered controller: store events are mapped to keys, keys are
 * queued, and reconcile(key) brings the world in line. A key is queued at
 * most once; a failed reconcile is retried after a short simulated delay.
 */
export abstract class Controller {
  private readonly queue = new Set<string>();
  private scheduled = false;
  private paused = false;
  private stopped = false;
  private unsubscribe?: () => void;

  constructor(protected readonly ctx: ControllerContext) {}

  abstract readonly name: string;

  /** Keys to reconcile because of a change. */
  protected abstract keysFor(event: StoreEvent): string[];

  protected abstract reconcile(key: string): void;

  /** Keys to reconcile at start (the initial state). */
  protected initialKeys(): string[] {
    return [];
  }

  start() {
    this.unsubscribe = this.ctx.store.subscribe(event => {
      for (const key of this.keysFor(event)) this.enqueue(key);
    });
    for (const key of this.initialKeys()) this.enqueue(key);
  }

  stop() {
    this.stopped = true;
    this.unsubscribe?.();
    this.queue.clear();
  }

  pause() {
    this.paused = true;
  }

  resume() {
    this.paused = false;
    this.schedule();
  }

  get idle() {
    return this.queue.size === 0;
  }

  enqueue(key: string) {
    if (this.stopped) return;
    this.queue.add(key);
    this.schedule();
  }

  /** Enqueues key after a simulated delay. */
  enqueueAfter(key: string, seconds: number) {
    this.ctx.clock.after(seconds, () => this.enqueue(key));
  }

  private schedule() {
    if (this.scheduled || this.paused || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  private drain() {
    const keys = [...this.queue];
    this.queue.clear();
    for (const key of keys) {
      if (this.paused || this.stopped) {
        this.queue.add(key);
        continue;
      }
      try {
        this.reconcile(key);
      } catch (e) {
        // Conflicts and races are expected under concurrent writers: retry.
        this.enqueueAfter(key, 1);
        if ((e as { code?: number }).code !== 409 && (e as { code?: number }).code !== 404) {
          process.emitWarning(`kube-sim ${this.name} controller: ${(e as Error).message}`);
        }
      }
    }
  }
}

/** 'namespace/name' → [namespace, name]. */
export function splitKey(key: string): [string | undefined, string] {
  const i = key.indexOf('/');
  return i < 0 ? [undefined, key] : [key.slice(0, i), key.slice(i + 1)];
}

export function keyOf(obj: { metadata: { namespace?: string; name: string } }) {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}
