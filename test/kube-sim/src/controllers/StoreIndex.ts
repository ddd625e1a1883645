import { ObjectStore } from '../store';
import { KubeObject } from '../types';

/**
 * An informer-style index over one resource: index value → keys
 * ('namespace/name') of the objects that produce it. Kept current from
 * store events, so lookups never scan a table.
 */
export class StoreIndex {
  private readonly buckets = new Map<string, Set<string>>();
  private readonly valuesByKey = new Map<string, string[]>();
  private unsubscribe?: () => void;

  constructor(
    private readonly store: ObjectStore,
    private readonly resource: string,
    private readonly valuesOf: (obj: KubeObject) => string[],
  ) {}

  start() {
    this.unsubscribe = this.store.subscribe(event => {
      if (event.resource !== this.resource) return;
      this.set(
        objectKey(event.object),
        event.type === 'DELETED' ? [] : this.valuesOf(event.object),
      );
    });
    for (const obj of this.store.list(this.resource).items)
      this.set(objectKey(obj), this.valuesOf(obj));
  }

  stop() {
    this.unsubscribe?.();
  }

  /** Keys of the objects indexed under value. */
  get(value: string): string[] {
    const bucket = this.buckets.get(value);
    return bucket ? [...bucket] : [];
  }

  private set(key: string, values: string[]) {
    for (const old of this.valuesByKey.get(key) ?? []) {
      const bucket = this.buckets.get(old);
      bucket?.delete(key);
      if (bucket?.size === 0) this.buckets.delete(old);
    }
    if (values.length === 0) {
      this.valuesByKey.delete(key);
      return;
    }
    this.valuesByKey.set(key, values);
    for (const value of values) {
      let bucket = this.buckets.get(value);
      if (!bucket) {
        bucket = new Set();
        this.buckets.set(value, bucket);
      }
      bucket.add(key);
    }
  }
}

function objectKey(obj: KubeObject) {
  return obj.metadata.namespace
    ? `${obj.metadata.namespace}/${obj.metadata.name}`
    : obj.metadata.name;
}
