/** What the store needs of an object: its name and namespace (none when cluster-scoped). */
export interface NamedObject {
  metadata?: { name?: string; namespace?: string };
}

const EMPTY = new Map<never, never>();

const namespaceOf = (o: NamedObject) => o.metadata?.namespace ?? '';
const nameOf = (o: NamedObject) => o.metadata?.name ?? '';

/**
 * The objects of one resource kind, by namespace and name, with an optional
 * second index per namespace (pods by the claims they mount). Each namespace
 * has a generation that changes whenever anything in it does, so readers can
 * reuse what they derived from it until then.
 */
export class IndexedStore<T extends NamedObject> {
  private readonly byNamespace = new Map<string, Map<string, T>>();
  private readonly secondary = new Map<string, Map<string, T[]>>();
  private readonly generations = new Map<string, number>();
  private nextGeneration = 1;
  private count = 0;

  /** `indexBy` gives the keys an object is found under in {@link indexed}. */
  constructor(private readonly indexBy?: (object: T) => string[]) {}

  /** Replaces everything, as after a (re-)list. */
  replace(objects: T[]) {
    const touched = new Set(this.byNamespace.keys());
    this.byNamespace.clear();
    this.secondary.clear();
    this.count = 0;
    for (const object of objects) {
      touched.add(namespaceOf(object));
      this.put(object);
    }
    touched.forEach(ns => this.bump(ns));
  }

  upsert(object: T) {
    this.unindex(namespaceOf(object), nameOf(object));
    this.put(object);
    this.bump(namespaceOf(object));
  }

  remove(object: NamedObject) {
    const namespace = namespaceOf(object);
    this.unindex(namespace, nameOf(object));
    if (this.byNamespace.get(namespace)?.delete(nameOf(object))) this.count--;
    this.bump(namespace);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.byNamespace.get(namespace ?? '')?.get(name);
  }

  /** The namespace's objects by name ('' for cluster-scoped kinds). */
  inNamespace(namespace: string): ReadonlyMap<string, T> {
    return this.byNamespace.get(namespace) ?? EMPTY;
  }

  /** The namespace's objects by the keys `indexBy` gave them. */
  indexed(namespace: string): ReadonlyMap<string, readonly T[]> {
    return this.secondary.get(namespace) ?? EMPTY;
  }

  *all(): IterableIterator<T> {
    for (const objects of this.byNamespace.values()) yield* objects.values();
  }

  /** Changes whenever an object of the namespace does (0: never held any). */
  generation(namespace: string): number {
    return this.generations.get(namespace) ?? 0;
  }

  /** Changes whenever any object of the store does. */
  get version(): number {
    return this.nextGeneration;
  }

  get size(): number {
    return this.count;
  }

  private put(object: T) {
    const namespace = namespaceOf(object);
    let objects = this.byNamespace.get(namespace);
    if (!objects) {
      objects = new Map();
      this.byNamespace.set(namespace, objects);
    }
    if (!objects.has(nameOf(object))) this.count++;
    objects.set(nameOf(object), object);
    if (!this.indexBy) return;
    let index = this.secondary.get(namespace);
    if (!index) {
      index = new Map();
      this.secondary.set(namespace, index);
    }
    for (const key of this.indexBy(object)) {
      const under = index.get(key);
      if (under) under.push(object);
      else index.set(key, [object]);
    }
  }

  private unindex(namespace: string, name: string) {
    const old = this.byNamespace.get(namespace)?.get(name);
    const index = this.secondary.get(namespace);
    if (!old || !index || !this.indexBy) return;
    for (const key of this.indexBy(old)) {
      const rest = (index.get(key) ?? []).filter(o => nameOf(o) !== name);
      if (rest.length) index.set(key, rest);
      else index.delete(key);
    }
  }

  private bump(namespace: string) {
    this.generations.set(namespace, this.nextGeneration++);
  }
}
