import { PV_PROTECTION } from '../admission';
import { KubeObject, StoreEvent } from '../types';
import { Controller } from './Controller';
import { hasFinalizer, removeFinalizer } from './util';

const VOLUMES = 'persistentvolumes';

/** pkg/controller/volume/pvprotection: a deleted volume keeps its finalizer while it is Bound. */
export class PvProtectionController extends Controller {
  readonly name = 'pv-protection-controller';

  protected initialKeys() {
    return this.ctx.store
      .list(VOLUMES, { filter: isProtectedAndDeleted })
      .items.map(pv => pv.metadata.name);
  }

  protected keysFor(event: StoreEvent): string[] {
    return event.resource === VOLUMES && isProtectedAndDeleted(event.object)
      ? [event.object.metadata.name]
      : [];
  }

  protected reconcile(name: string) {
    const pv = this.ctx.store.get(VOLUMES, undefined, name);
    if (!pv || !isProtectedAndDeleted(pv) || pv.status?.phase === 'Bound')
      return;
    removeFinalizer(this.ctx.store, VOLUMES, pv, PV_PROTECTION);
  }
}

function isProtectedAndDeleted(pv: KubeObject) {
  return !!pv.metadata.deletionTimestamp && hasFinalizer(pv, PV_PROTECTION);
}
