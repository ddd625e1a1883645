import { randomUUID } from 'node:crypto';
import { admit, DEFAULT_CLASS_ANNOTATION } from './admission';
import { ApiError, errors } from './errors';
import {
  apiVersionOf,
  resourceKey,
  ResourceType,
  typeByKey,
} from './resources';
import { equalityTerms, labelMatcher, parseLabelSelector } from './selectors';
import { DeleteOptions, KubeObject, StoreEvent, WriteOptions } from './types';

export interface ListOptions {
  namespace?: string;
  /** A label selector; its equality terms are answered from a label index. */
  labelSelector?: string;
  /** Returns true for objects to keep. */
  filter?: (obj: KubeObject) => boolean;
  limit?: number;
  continueToken?: string;
}

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  continueToken?: string;
  remainingItemCount?: number;
}

export interface WatchOptions {
  namespace?: string;
  filter?: (obj: KubeObject) => boolean;
  /** Replay events after this version; undefined or '0' sends the current state as ADDED first. */
  resourceVersion?: string;
}

type Listener = (event: StoreEvent) => void;

/** Kinds whose metadata.generation counts spec changes (workload controllers' resources). */
const GENERATION_KINDS = new Set([
  'StatefulSet',
  'Deployment',
  'ReplicaSet',
  'DaemonSet',
  'Job',
  'CronJob',
  'HorizontalPodAutoscaler',
  'Ingress',
]);

const ORPHAN = 'orphan';
const FOREGROUND = 'foregroundDeletion';

export function timestamp(date = new Date()) {
  return `${date.toISOString().slice(0, 19)}Z`;
}

function keyOf(namespace: string | undefined, name: string) {
  return namespace ? `${namespace}/${name}` : name;
}

function refOf(type: ResourceType, name?: string) {
  return {
    group: type.group,
    kind: type.kind === 'Namespace' ? 'namespaces' : type.plural,
    name,
  };
}

/** Real clients see `pods "x" not found`: the resource's plural, not its kind. */
export function notFound(type: ResourceType, name: string) {
  return errors.notFound(refOf(type, name));
}

/** A list's matches at one resourceVersion, paged through by continue tokens. */
type ListSnapshot = { items: KubeObject[]; rv: number; id?: string };
const MAX_LIST_SNAPSHOTS = 256;

function encodeContinue(resourceVersion: number, id: string, offset: number) {
  return Buffer.from(
    JSON.stringify({ v: 'meta.k8s.io/v1', rv: resourceVersion, id, offset }),
  ).toString('base64');
}

function decodeContinue(token: string): {
  rv: number;
  id: string;
  offset: number;
} {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
    if (
      typeof parsed.rv === 'number' &&
      typeof parsed.id === 'string' &&
      Number.isInteger(parsed.offset)
    )
      return parsed;
  } catch {
    // fall through to the error below
  }
  throw errors.badRequest(
    'continue key is not valid: the continue token is malformed',
  );
}

const labelPairs = (obj: KubeObject | undefined) =>
  Object.entries(obj?.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`);

/** One resource's objects, with sorted keys for pagination and an index of label pairs for selectors. */
class Table {
  readonly objects = new Map<string, KubeObject>();
  private sortedKeys: string[] | undefined;
  private readonly byLabel = new Map<string, Set<string>>();

  keys(): string[] {
    this.sortedKeys ??= [...this.objects.keys()].sort();
    return this.sortedKeys;
  }

  /** Sorted keys of objects carrying every label pair, or undefined when no pairs are given. */
  keysWithLabels(pairs: Array<[string, string]>): string[] | undefined {
    if (pairs.length === 0) return undefined;
    const sets = pairs.map(
      ([k, v]) => this.byLabel.get(`${k}=${v}`) ?? new Set<string>(),
    );
    const smallest = sets.reduce((a, b) => (b.size < a.size ? b : a));
    return [...smallest].sort();
  }

  set(key: string, obj: KubeObject) {
    const old = this.objects.get(key);
    if (!old) this.sortedKeys = undefined;
    this.unindex(key, old);
    this.objects.set(key, obj);
    for (const pair of labelPairs(obj)) {
      let keys = this.byLabel.get(pair);
      if (!keys) this.byLabel.set(pair, (keys = new Set()));
      keys.add(key);
    }
  }

  delete(key: string) {
    this.unindex(key, this.objects.get(key));
    this.objects.delete(key);
    this.sortedKeys = undefined;
  }

  private unindex(key: string, obj: KubeObject | undefined) {
    for (const pair of labelPairs(obj)) {
      const keys = this.byLabel.get(pair);
      keys?.delete(key);
      if (keys?.size === 0) this.byLabel.delete(pair);
    }
  }
}

/** Index of the first key at or after target. */
function lowerBound(keys: string[], target: string) {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (keys[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The simulator's etcd and registry in one: objects by resource, a global
 * resourceVersion, an event history for watches, and the deletion rules
 * (preconditions, finalizers, graceful pod deletion, propagation finalizers).
 * Stored objects are never mutated in place, so they can be shared with readers.
 */
export class ObjectStore {
  private version = 1;
  private readonly tables = new Map<string, Table>();
  private history: StoreEvent[] = [];
  private historyStart = 0;
  private readonly listeners = new Set<Listener>();
  private readonly snapshots = new Map<string, ListSnapshot>();

  constructor(
    private readonly options: { historyLimit: number } = {
      historyLimit: 10000,
    },
  ) {}

  get resourceVersion(): string {
    return String(this.version);
  }

  /** The oldest version a watch may start from. */
  get oldestWatchableVersion(): number {
    return this.history.length
      ? this.history[this.historyStart].resourceVersion - 1
      : this.version;
  }

  private table(resource: string) {
    let table = this.tables.get(resource);
    if (!table) {
      table = new Table();
      this.tables.set(resource, table);
    }
    return table;
  }

  /** Listen to every committed change (controllers). */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get(
    resource: string,
    namespace: string | undefined,
    name: string,
  ): KubeObject | undefined {
    return this.table(resource).objects.get(keyOf(namespace, name));
  }

  /** Like get, but 404 when missing. */
  require(
    resource: string,
    namespace: string | undefined,
    name: string,
  ): KubeObject {
    const obj = this.get(resource, namespace, name);
    if (!obj) throw notFound(typeByKey(resource), name);
    return obj;
  }

  count(resource: string) {
    return this.table(resource).objects.size;
  }

  /**
   * Lists objects in key order. With a limit, the first page takes a snapshot
   * of every match, and continue tokens page through that snapshot: later
   * pages are consistent with the first, as kube-apiserver serves them from
   * the first page's resourceVersion. Snapshots expire (410) like etcd history.
   */
  list(resource: string, options: ListOptions = {}): ListResult {
    if (options.continueToken)
      return this.continueList(options.continueToken, options.limit);
    const table = this.table(resource);
    const labels = labelMatcher(options.labelSelector);
    const keys =
      table.keysWithLabels(
        equalityTerms(parseLabelSelector(options.labelSelector)),
      ) ?? table.keys();
    const prefix = options.namespace ? `${options.namespace}/` : undefined;
    const items: KubeObject[] = [];
    for (let i = prefix ? lowerBound(keys, prefix) : 0; i < keys.length; i++) {
      if (prefix && !keys[i].startsWith(prefix)) break;
      const obj = table.objects.get(keys[i])!;
      if (
        labels(obj.metadata.labels) &&
        (!options.filter || options.filter(obj))
      )
        items.push(obj);
    }
    const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
    if (items.length <= limit)
      return { items, resourceVersion: this.resourceVersion };
    return this.page({ items, rv: this.version }, 0, limit);
  }

  private page(
    snapshot: ListSnapshot,
    offset: number,
    limit: number,
  ): ListResult {
    const end = offset + limit;
    const result: ListResult = {
      items: snapshot.items.slice(offset, end),
      resourceVersion: String(snapshot.rv),
    };
    if (end < snapshot.items.length) {
      const id = snapshot.id ?? randomUUID();
      snapshot.id = id;
      this.snapshots.delete(id);
      this.snapshots.set(id, snapshot);
      while (this.snapshots.size > MAX_LIST_SNAPSHOTS)
        this.snapshots.delete(this.snapshots.keys().next().value!);
      result.continueToken = encodeContinue(snapshot.rv, id, end);
      result.remainingItemCount = snapshot.items.length - end;
    }
    return result;
  }

  private continueList(token: string, limit: number | undefined): ListResult {
    const { id, offset } = decodeContinue(token);
    const snapshot = this.snapshots.get(id);
    if (!snapshot) {
      throw errors.gone(
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results.',
      );
    }
    return this.page(snapshot, offset, limit && limit > 0 ? limit : Infinity);
  }

  /** Starts a watch; events are delivered synchronously in commit order. */
  watch(
    resource: string,
    options: WatchOptions,
    onEvent: (event: StoreEvent) => void,
  ): () => void {
    const matches = (event: StoreEvent) => {
      if (event.resource !== resource) return false;
      if (
        options.namespace &&
        event.object.metadata.namespace !== options.namespace
      )
        return false;
      return !options.filter || options.filter(event.object);
    };
    const from = options.resourceVersion;
    if (from === undefined || from === '' || from === '0') {
      for (const obj of this.list(resource, {
        namespace: options.namespace,
        filter: options.filter,
      }).items) {
        onEvent({
          type: 'ADDED',
          resource,
          object: obj,
          resourceVersion: Number(obj.metadata.resourceVersion),
        });
      }
    } else {
      const since = Number(from);
      if (!Number.isInteger(since) || since < 0) {
        throw errors.badRequest(`invalid resource version "${from}"`);
      }
      if (since < this.oldestWatchableVersion) {
        throw errors.gone(
          `too old resource version: ${since} (${this.oldestWatchableVersion})`,
        );
      }
      for (let i = this.historyStart; i < this.history.length; i++) {
        const event = this.history[i];
        if (event.resourceVersion > since && matches(event)) onEvent(event);
      }
    }
    const listener: Listener = event => {
      if (matches(event)) onEvent(event);
    };
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forgets the event history, as etcd compaction does: older watches end with an ERROR 410 Expired. */
  compact() {
    this.history = [];
    this.historyStart = 0;
    this.snapshots.clear();
  }

  private commit(
    resource: string,
    event: Omit<StoreEvent, 'resource' | 'resourceVersion'>,
  ) {
    const full: StoreEvent = {
      ...event,
      resource,
      resourceVersion: Number(event.object.metadata.resourceVersion),
    };
    this.history.push(full);
    if (this.history.length - this.historyStart > this.options.historyLimit) {
      this.historyStart++;
      if (this.historyStart > 4096) {
        this.history = this.history.slice(this.historyStart);
        this.historyStart = 0;
      }
    }
    for (const listener of [...this.listeners]) {
      try {
        listener(full);
      } catch (e) {
        // A failing watcher or controller must not break the write that triggered it.
        process.emitWarning(
          `kube-sim listener failed: ${(e as Error).stack ?? e}`,
        );
      }
    }
  }

  private nextVersion() {
    this.version += 1;
    return String(this.version);
  }

  private defaultStorageClass = () => {
    const classes = this.table(
      'storage.k8s.io/storageclasses',
    ).objects.values();
    for (const sc of classes) {
      if (sc.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true')
        return sc.metadata.name;
    }
    return undefined;
  };

  private requireNamespace(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
  ) {
    if (!type.namespaced) return;
    if (!namespace)
      throw errors.badRequest(
        'the namespace of the object does not match the namespace on the request',
      );
    const ns = this.get('namespaces', undefined, namespace);
    if (!ns) throw notFound(typeByKey('namespaces'), namespace);
    if (ns.metadata.deletionTimestamp) {
      throw new ApiError(
        403,
        'Forbidden',
        `${type.plural} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
      );
    }
  }

  create(
    resource: string,
    input: KubeObject,
    options: WriteOptions = {},
  ): KubeObject {
    const type = typeByKey(resource);
    const obj: KubeObject = structuredClone(input);
    obj.apiVersion = apiVersionOf(type);
    obj.kind = type.kind;
    obj.metadata ??= {} as KubeObject['metadata'];
    if (!obj.metadata.name && obj.metadata.generateName) {
      obj.metadata.name = `${obj.metadata.generateName}${randomUUID()
        .replace(/-/g, '')
        .slice(0, 5)}`;
    }
    if (!type.namespaced) delete obj.metadata.namespace;
    admit(type, obj, undefined, this.defaultStorageClass);
    const namespace = obj.metadata.namespace;
    this.requireNamespace(type, namespace, obj.metadata.name);
    const key = keyOf(namespace, obj.metadata.name);
    if (this.table(resource).objects.has(key)) {
      throw errors.alreadyExists(refOf(type, obj.metadata.name));
    }
    for (const field of [
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'resourceVersion',
    ] as const) {
      delete obj.metadata[field];
    }
    obj.metadata.uid = randomUUID();
    obj.metadata.creationTimestamp = timestamp();
    if (GENERATION_KINDS.has(type.kind)) obj.metadata.generation = 1;
    if (options.dryRun)
      return { ...obj, metadata: { ...obj.metadata, resourceVersion: '' } };
    obj.metadata.resourceVersion = this.nextVersion();
    this.table(resource).set(key, obj);
    this.commit(resource, { type: 'ADDED', object: obj });
    return obj;
  }

  /**
   * Replaces an object. A resourceVersion in the input must match (optimistic
   * concurrency); without one the write is unconditional, as in Kubernetes.
   */
  update(
    resource: string,
    input: KubeObject,
    options: WriteOptions = {},
  ): KubeObject {
    const type = typeByKey(resource);
    const namespace = type.namespaced ? input.metadata?.namespace : undefined;
    const name = input.metadata?.name;
    const old = this.get(resource, namespace, name);
    if (!old) throw notFound(type, name);
    const rv = input.metadata.resourceVersion;
    if (rv && rv !== old.metadata.resourceVersion) {
      throw errors.conflict(
        refOf(type, name),
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    }
    const obj: KubeObject = structuredClone(input);
    obj.apiVersion = apiVersionOf(type);
    obj.kind = type.kind;
    for (const field of [
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
    ] as const) {
      if (old.metadata[field] === undefined) delete obj.metadata[field];
      else obj.metadata[field] = old.metadata[field] as never;
    }
    if (!type.namespaced) delete obj.metadata.namespace;
    admit(type, obj, old, this.defaultStorageClass);
    if (old.metadata.deletionTimestamp) {
      const added = (obj.metadata.finalizers ?? []).filter(
        f => !(old.metadata.finalizers ?? []).includes(f),
      );
      if (added.length > 0) {
        throw errors.invalid({ group: type.group, kind: type.kind, name }, [
          {
            field: 'metadata.finalizers',
            message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(
              added,
            )}`,
            reason: 'FieldValueForbidden',
          },
        ]);
      }
    }
    const { metadata: _m1, status: _s1, ...oldRest } = old;
    const { metadata: _m2, status: _s2, ...newRest } = obj;
    if (
      old.metadata.generation !== undefined &&
      JSON.stringify(oldRest) !== JSON.stringify(newRest)
    ) {
      obj.metadata.generation = old.metadata.generation + 1;
    }
    if (options.dryRun)
      return {
        ...obj,
        metadata: {
          ...obj.metadata,
          resourceVersion: old.metadata.resourceVersion,
        },
      };
    // kube-apiserver skips writes that change nothing: no new resourceVersion, no watch event.
    if (
      JSON.stringify({
        ...obj,
        metadata: { ...obj.metadata, resourceVersion: '' },
      }) ===
      JSON.stringify({
        ...old,
        metadata: { ...old.metadata, resourceVersion: '' },
      })
    ) {
      return old;
    }
    return this.store(resource, obj, old);
  }

  /** Writes an already-admitted object and removes it when its deletion is complete. */
  private store(
    resource: string,
    obj: KubeObject,
    old: KubeObject,
  ): KubeObject {
    obj.metadata.resourceVersion = this.nextVersion();
    const key = keyOf(obj.metadata.namespace, obj.metadata.name);
    if (obj.metadata.finalizers?.length === 0) delete obj.metadata.finalizers;
    const finished =
      obj.metadata.deletionTimestamp !== undefined &&
      !obj.metadata.finalizers?.length &&
      !(
        obj.kind === 'Pod' && (obj.metadata.deletionGracePeriodSeconds ?? 0) > 0
      ) &&
      !(obj.kind === 'Namespace' && obj.spec?.finalizers?.length);
    if (finished) {
      this.table(resource).delete(key);
      this.commit(resource, { type: 'DELETED', object: obj, previous: old });
    } else {
      this.table(resource).set(key, obj);
      this.commit(resource, { type: 'MODIFIED', object: obj, previous: old });
    }
    return obj;
  }

  /**
   * Deletes as the registry does: preconditions, then graceful deletion for
   * pods, propagation finalizers, and finalizers keeping a marked object alive.
   */
  delete(
    resource: string,
    namespace: string | undefined,
    name: string,
    options: DeleteOptions = {},
  ): KubeObject {
    const type = typeByKey(resource);
    const old = this.get(
      resource,
      type.namespaced ? namespace : undefined,
      name,
    );
    if (!old) throw notFound(type, name);
    const pre = options.preconditions ?? {};
    if (pre.uid && pre.uid !== old.metadata.uid) {
      throw errors.conflict(
        refOf(type, name),
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`,
      );
    }
    if (
      pre.resourceVersion &&
      pre.resourceVersion !== old.metadata.resourceVersion
    ) {
      throw errors.conflict(
        refOf(type, name),
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`,
      );
    }
    const obj: KubeObject = structuredClone(old);
    const finalizers = new Set(obj.metadata.finalizers ?? []);
    if (options.propagationPolicy === 'Orphan') {
      finalizers.add(ORPHAN);
      finalizers.delete(FOREGROUND);
    } else if (options.propagationPolicy === 'Foreground') {
      finalizers.add(FOREGROUND);
      finalizers.delete(ORPHAN);
    } else if (options.propagationPolicy === 'Background') {
      finalizers.delete(ORPHAN);
      finalizers.delete(FOREGROUND);
    }
    if (
      old.metadata.deletionTimestamp === undefined ||
      options.propagationPolicy
    ) {
      obj.metadata.finalizers = [...finalizers];
    }
    let grace = 0;
    if (type.kind === 'Pod') {
      const requested =
        options.gracePeriodSeconds ??
        obj.spec?.terminationGracePeriodSeconds ??
        30;
      const unscheduled = !obj.spec?.nodeName;
      grace = unscheduled ? 0 : Math.max(0, requested);
      const current = old.metadata.deletionGracePeriodSeconds;
      if (current !== undefined && current <= grace) grace = current;
    }
    // A namespace waits for the namespace controller (spec.finalizers) while Terminating.
    const namespaceFinalizers =
      type.kind === 'Namespace' && obj.spec?.finalizers?.length > 0;
    if (type.kind === 'Namespace')
      obj.status = { ...obj.status, phase: 'Terminating' };
    if (
      grace === 0 &&
      !obj.metadata.finalizers?.length &&
      !namespaceFinalizers
    ) {
      if (options.dryRun) return old;
      return this.store(
        resource,
        {
          ...obj,
          metadata: {
            ...obj.metadata,
            deletionTimestamp: obj.metadata.deletionTimestamp ?? timestamp(),
            deletionGracePeriodSeconds: 0,
          },
        },
        old,
      );
    }
    const now = Date.now();
    if (
      !old.metadata.deletionTimestamp ||
      grace < (old.metadata.deletionGracePeriodSeconds ?? Infinity)
    ) {
      obj.metadata.deletionTimestamp = timestamp(new Date(now + grace * 1000));
      obj.metadata.deletionGracePeriodSeconds = grace;
      if (
        obj.metadata.generation !== undefined &&
        !old.metadata.deletionTimestamp
      )
        obj.metadata.generation += 1;
    }
    if (options.dryRun) return obj;
    if (JSON.stringify(obj.metadata) === JSON.stringify(old.metadata))
      return old;
    return this.store(resource, obj, old);
  }

  /** Creates the object, or replaces the one of that name (scenarios). */
  apply(resource: string, obj: KubeObject): KubeObject {
    const type = typeByKey(resource);
    const existing = this.get(
      resource,
      type.namespaced ? obj.metadata.namespace : undefined,
      obj.metadata.name,
    );
    if (!existing) return this.create(resource, obj);
    return this.update(resource, {
      ...obj,
      metadata: {
        ...obj.metadata,
        resourceVersion: existing.metadata.resourceVersion,
      },
    });
  }
}

export { resourceKey };
