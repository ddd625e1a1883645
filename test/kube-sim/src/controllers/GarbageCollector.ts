import { findTypeByKind, resourceKey, RESOURCE_TYPES } from '../resources';
import { KubeObject, OwnerReference, StoreEvent } from '../types';
import { Controller } from './Controller';
import { hasFinalizer, removeFinalizer, tolerate } from './util';

const ORPHAN = 'orphan';
const FOREGROUND = 'foregroundDeletion';

interface Dependent {
  resource: string;
  namespace?: string;
  name: string;
  ref: OwnerReference;
}

const itemKey = (
  resource: string,
  namespace: string | undefined,
  name: string,
) => `${resource}|${namespace ?? ''}|${name}`;

/**
 * pkg/controller/garbagecollector: deletes dependents whose owners are all
 * gone (or replaced: same name, other uid), drops references to missing
 * owners from dependents that still have a live one, deletes the
 * dependents of a foreground-deleted owner and then lets the owner go once
 * no blocking dependent remains, and orphans dependents for the 'orphan'
 * finalizer. Dependents are indexed by owner uid.
 */
export class GarbageCollector extends Controller {
  readonly name = 'garbage-collector-controller';
  private readonly resources = new Set(
    RESOURCE_TYPES.filter(t => !t.listOnly).map(resourceKey),
  );
  /** owner uid → dependent uid → dependent. */
  private readonly dependents = new Map<string, Map<string, Dependent>>();
  /** dependent uid → its owner references, to diff on change. */
  private readonly owners = new Map<string, OwnerReference[]>();

  start() {
    for (const resource of this.resources) {
      for (const obj of this.ctx.store.list(resource).items)
        this.track(resource, obj, obj.metadata.ownerReferences ?? []);
    }
    super.start();
  }

  protected initialKeys() {
    const keys: string[] = [];
    for (const resource of this.resources) {
      const relevant = (o: KubeObject) =>
        !!o.metadata.ownerReferences?.length ||
        (!!o.metadata.deletionTimestamp &&
          (hasFinalizer(o, ORPHAN) || hasFinalizer(o, FOREGROUND)));
      for (const obj of this.ctx.store.list(resource, { filter: relevant })
        .items)
        keys.push(itemKey(resource, obj.metadata.namespace, obj.metadata.name));
    }
    return keys;
  }

  protected keysFor(event: StoreEvent): string[] {
    if (!this.resources.has(event.resource)) return [];
    const obj = event.object;
    const uid = obj.metadata.uid;
    const oldRefs = this.owners.get(uid) ?? [];
    const newRefs =
      event.type === 'DELETED' ? [] : obj.metadata.ownerReferences ?? [];
    const changed = JSON.stringify(oldRefs) !== JSON.stringify(newRefs);
    if (changed) this.track(event.resource, obj, newRefs);
    const self = itemKey(
      event.resource,
      obj.metadata.namespace,
      obj.metadata.name,
    );
    const keys: string[] = [];
    if (event.type === 'DELETED') {
      for (const dep of this.dependents.get(uid)?.values() ?? [])
        keys.push(itemKey(dep.resource, dep.namespace, dep.name));
    } else if (
      (changed && newRefs.length) ||
      (obj.metadata.deletionTimestamp &&
        (hasFinalizer(obj, ORPHAN) || hasFinalizer(obj, FOREGROUND)))
    ) {
      keys.push(self);
    }
    // Owners waiting for this dependent (foreground deletion) look again when it goes or lets go.
    const kept = new Set(newRefs.map(r => r.uid));
    for (const ref of oldRefs) {
      if (!kept.has(ref.uid))
        keys.push(...this.ownerKey(ref, obj.metadata.namespace));
    }
    return keys;
  }

  private track(resource: string, obj: KubeObject, refs: OwnerReference[]) {
    const uid = obj.metadata.uid;
    for (const ref of this.owners.get(uid) ?? []) {
      const deps = this.dependents.get(ref.uid);
      deps?.delete(uid);
      if (deps?.size === 0) this.dependents.delete(ref.uid);
    }
    if (refs.length === 0) {
      this.owners.delete(uid);
      return;
    }
    this.owners.set(uid, refs);
    for (const ref of refs) {
      let deps = this.dependents.get(ref.uid);
      if (!deps) {
        deps = new Map();
        this.dependents.set(ref.uid, deps);
      }
      deps.set(uid, {
        resource,
        namespace: obj.metadata.namespace,
        name: obj.metadata.name,
        ref,
      });
    }
  }

  /** The owner's resource key and item key; nothing for kinds the simulator does not store. */
  private ownerKey(ref: OwnerReference, dependentNamespace?: string): string[] {
    const type = findTypeByKind(ref.apiVersion, ref.kind);
    if (!type || type.listOnly) return [];
    return [
      itemKey(
        resourceKey(type),
        type.namespaced ? dependentNamespace : undefined,
        ref.name,
      ),
    ];
  }

  /** 'absent' (gone or replaced), 'waiting' (deleting its dependents in the foreground) or 'solid'. */
  private classify(
    ref: OwnerReference,
    dependentNamespace?: string,
  ): 'absent' | 'waiting' | 'solid' {
    const type = findTypeByKind(ref.apiVersion, ref.kind);
    // Owners of kinds the simulator cannot hold are left alone rather than presumed gone.
    if (!type || type.listOnly) return 'solid';
    const owner = this.ctx.store.get(
      resourceKey(type),
      type.namespaced ? dependentNamespace : undefined,
      ref.name,
    );
    if (!owner || owner.metadata.uid !== ref.uid) return 'absent';
    return owner.metadata.deletionTimestamp && hasFinalizer(owner, FOREGROUND)
      ? 'waiting'
      : 'solid';
  }

  protected reconcile(key: string) {
    const [resource, namespace, name] = key.split('|');
    const store = this.ctx.store;
    const item = store.get(resource, namespace || undefined, name);
    if (!item) return;
    if (item.metadata.deletionTimestamp) {
      if (hasFinalizer(item, ORPHAN)) this.orphanDependents(resource, item);
      else if (hasFinalizer(item, FOREGROUND))
        this.deleteDependents(resource, item);
      return;
    }
    const refs = item.metadata.ownerReferences ?? [];
    if (refs.length === 0) return;
    const classes = refs.map(ref =>
      this.classify(ref, item.metadata.namespace),
    );
    const preconditions = { uid: item.metadata.uid };
    if (classes.includes('solid')) {
      // attemptToDeleteItem: a live owner keeps the item; dangling and waiting references are dropped.
      const keep = refs.filter((_, i) => classes[i] === 'solid');
      if (keep.length === refs.length) return;
      store.update(resource, {
        ...item,
        metadata: { ...item.metadata, ownerReferences: keep },
      });
    } else if (
      classes.includes('waiting') &&
      this.dependents.has(item.metadata.uid)
    ) {
      tolerate([404, 409], () =>
        store.delete(resource, namespace || undefined, name, {
          preconditions,
          propagationPolicy: 'Foreground',
        }),
      );
    } else {
      let policy: 'Orphan' | 'Foreground' | 'Background' = 'Background';
      if (hasFinalizer(item, ORPHAN)) policy = 'Orphan';
      else if (hasFinalizer(item, FOREGROUND)) policy = 'Foreground';
      tolerate([404, 409], () =>
        store.delete(resource, namespace || undefined, name, {
          preconditions,
          propagationPolicy: policy,
        }),
      );
    }
  }

  /** processDeletingDependentsItem: delete every dependent; release the owner when none blocks it. */
  private deleteDependents(resource: string, owner: KubeObject) {
    const deps = [...(this.dependents.get(owner.metadata.uid)?.values() ?? [])];
    if (!deps.some(dep => dep.ref.blockOwnerDeletion)) {
      removeFinalizer(this.ctx.store, resource, owner, FOREGROUND);
      return;
    }
    for (const dep of deps)
      this.enqueue(itemKey(dep.resource, dep.namespace, dep.name));
  }

  /** attemptToOrphan: drop the owner's references from its dependents, then the finalizer. */
  private orphanDependents(resource: string, owner: KubeObject) {
    const store = this.ctx.store;
    for (const dep of [
      ...(this.dependents.get(owner.metadata.uid)?.values() ?? []),
    ]) {
      const obj = store.get(dep.resource, dep.namespace, dep.name);
      if (!obj) continue;
      const refs = (obj.metadata.ownerReferences ?? []).filter(
        r => r.uid !== owner.metadata.uid,
      );
      const { ownerReferences: _dropped, ...metadata } = obj.metadata;
      store.update(dep.resource, {
        ...obj,
        metadata: refs.length
          ? { ...metadata, ownerReferences: refs }
          : metadata,
      });
    }
    removeFinalizer(store, resource, owner, ORPHAN);
  }
}
