import { SimClock } from '../clock';
import { ObjectStore } from '../store';
import { KubeObject, StoreEvent } from '../types';
import { StoreIndex } from './StoreIndex';

export interface ControllerContext {
  store: ObjectStore;
  clock: SimClock;
}

/**
 * Thrown by a reconcile that must wait for something it does not watch
 * (the real controllers return an error and rely on their rate-limited
 * queue): the key is retried after `seconds` without a warning.
 */
export class Requeue extends Error {
  constructor(message: string, readonly seconds = 1) {
    super(message);
  }
}

/**
 * A level-triggered controller: store events are mapped to keys, keys are
 * queued, and reconcile(key) brings the world in line. A key is queued at
 * most once; a failed reconcile is retried after a short simulated delay.
 */
export abstract class Controller {
  private readonly queue = new Set<string>();
  private readonly timers = new Set<() => void>();
  private readonly indexes: StoreIndex[] = [];
  /** Per object uid: delays started with elapsed(), and whether they are over. */
  private readonly delays = new Map<string, Map<string, boolean>>();
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

  /** An index kept current from the store, started before the controller sees events. */
  protected index(
    resource: string,
    valuesOf: (obj: KubeObject) => string[],
  ): StoreIndex {
    const index = new StoreIndex(this.ctx.store, resource, valuesOf);
    this.indexes.push(index);
    return index;
  }

  start() {
    for (const index of this.indexes) index.start();
    this.unsubscribe = this.ctx.store.subscribe(event => {
      for (const key of this.keysFor(event)) this.enqueue(key);
    });
    for (const key of this.initialKeys()) this.enqueue(key);
  }

  stop() {
    this.stopped = true;
    this.unsubscribe?.();
    for (const index of this.indexes) index.stop();
    for (const cancel of this.timers) cancel();
    this.timers.clear();
    this.queue.clear();
  }

  pause() {
    this.paused = true;
  }

  resume() {
    this.paused = false;
    this.schedule();
  }

  /** Nothing queued, running or waiting on a timer. */
  get idle() {
    return this.queue.size === 0 && !this.scheduled && this.timers.size === 0;
  }

  enqueue(key: string) {
    if (this.stopped) return;
    this.queue.add(key);
    this.schedule();
  }

  /** Enqueues key after a simulated delay. */
  enqueueAfter(key: string, seconds: number) {
    if (this.stopped) return;
    const cancel = this.ctx.clock.after(seconds, () => {
      this.timers.delete(cancel);
      this.enqueue(key);
    });
    this.timers.add(cancel);
  }

  /**
   * True once `seconds` (simulated) have passed since the first call for
   * (uid, tag); the first call starts the delay and enqueues key when it ends.
   */
  protected elapsed(
    uid: string,
    tag: string,
    seconds: number,
    key: string,
  ): boolean {
    let tags = this.delays.get(uid);
    if (!tags) {
      tags = new Map();
      this.delays.set(uid, tags);
    }
    const done = tags.get(tag);
    if (done !== undefined) return done;
    tags.set(tag, false);
    const started = tags;
    const cancel = this.ctx.clock.after(seconds, () => {
      this.timers.delete(cancel);
      if (started.has(tag)) started.set(tag, true);
      this.enqueue(key);
    });
    this.timers.add(cancel);
    return false;
  }

  /** Drops the delays of an object that is gone. */
  protected forget(uid: string) {
    this.delays.delete(uid);
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
        if (e instanceof Requeue) {
          this.enqueueAfter(key, e.seconds);
          continue;
        }
        // Conflicts and races are expected under concurrent writers: retry.
        this.enqueueAfter(key, 1);
        const code = (e as { code?: number }).code;
        if (code !== 409 && code !== 404) {
          process.emitWarning(
            `kube-sim ${this.name} controller: ${(e as Error).message}`,
          );
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
  return obj.metadata.namespace
    ? `${obj.metadata.namespace}/${obj.metadata.name}`
    : obj.metadata.name;
}
