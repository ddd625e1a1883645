import { resourceKey, RESOURCE_TYPES } from '../resources';
import { KubeObject, StoreEvent } from '../types';
import { Controller } from './Controller';
import { condition, now, tolerate } from './util';

const NAMESPACES = 'namespaces';
const FINALIZER = 'kubernetes';

/**
 * pkg/controller/namespace: a deleted namespace (Terminating) has its
 * content deleted (background propagation); once nothing is left, the
 * 'kubernetes' finalizer is removed and the namespace goes.
 */
export class NamespaceController extends Controller {
  readonly name = 'namespace-controller';
  private readonly contents = RESOURCE_TYPES.filter(
    t => t.namespaced && !t.listOnly,
  ).map(resourceKey);

  protected initialKeys() {
    return this.ctx.store
      .list(NAMESPACES, { filter: isFinalizing })
      .items.map(ns => ns.metadata.name);
  }

  protected keysFor(event: StoreEvent): string[] {
    if (event.resource === NAMESPACES)
      return isFinalizing(event.object) ? [event.object.metadata.name] : [];
    const namespace = event.object.metadata.namespace;
    if (event.type !== 'DELETED' || !namespace) return [];
    const ns = this.ctx.store.get(NAMESPACES, undefined, namespace);
    return ns && isFinalizing(ns) ? [namespace] : [];
  }

  protected reconcile(name: string) {
    const store = this.ctx.store;
    const ns = store.get(NAMESPACES, undefined, name);
    if (!ns || !isFinalizing(ns)) return;
    let remaining = 0;
    for (const resource of this.contents) {
      for (const obj of store.list(resource, { namespace: name }).items) {
        if (!obj.metadata.deletionTimestamp) {
          tolerate([404, 409], () =>
            store.delete(resource, name, obj.metadata.name, {
              propagationPolicy: 'Background',
            }),
          );
        }
      }
      remaining += store.list(resource, { namespace: name }).items.length;
    }
    const at = now();
    const copy = structuredClone(ns);
    copy.status = {
      phase: 'Terminating',
      conditions: [
        condition('NamespaceDeletionDiscoveryFailure', 'False', at, {
          reason: 'ResourcesDiscovered',
          message: 'All resources successfully discovered',
        }),
        condition('NamespaceDeletionGroupVersionParsingFailure', 'False', at, {
          reason: 'ParsedGroupVersions',
          message: 'All legacy kube types successfully parsed',
        }),
        condition('NamespaceDeletionContentFailure', 'False', at, {
          reason: 'ContentDeleted',
          message:
            'All content successfully deleted, may be waiting on finalization',
        }),
        remaining
          ? condition('NamespaceContentRemaining', 'True', at, {
              reason: 'SomeResourcesRemain',
              message: `Some resources are remaining: ${remaining} objects`,
            })
          : condition('NamespaceContentRemaining', 'False', at, {
              reason: 'ContentRemoved',
              message: 'All content successfully removed',
            }),
        condition('NamespaceFinalizersRemaining', 'False', at, {
          reason: 'ContentHasNoFinalizers',
          message: 'All content-preserving finalizers finished',
        }),
      ].map(({ lastProbeTime: _probe, ...c }) => c),
    };
    if (remaining === 0)
      copy.spec = {
        ...copy.spec,
        finalizers: copy.spec.finalizers.filter((f: string) => f !== FINALIZER),
      };
    const unchanged =
      remaining > 0 &&
      JSON.stringify(ns.status?.conditions?.[3]?.message) ===
        JSON.stringify(copy.status.conditions[3].message);
    if (!unchanged) store.update(NAMESPACES, copy);
  }
}

function isFinalizing(ns: KubeObject) {
  return (
    !!ns.metadata.deletionTimestamp &&
    (ns.spec?.finalizers ?? []).includes(FINALIZER)
  );
}
