import { PVC_PROTECTION } from '../admission';
import { KubeObject, StoreEvent } from '../types';
import { Controller, keyOf, splitKey } from './Controller';
import { claimNames, hasFinalizer, removeFinalizer } from './util';

const CLAIMS = 'persistentvolumeclaims';

/**
 * pkg/controller/volume/pvcprotection: the finalizer of a deleted claim is
 * removed once no scheduled pod in its namespace mounts it. Terminating
 * pods still count until they are gone.
 */
export class PvcProtectionController extends Controller {
  readonly name = 'pvc-protection-controller';
  private readonly podsByClaim = this.index('pods', pod =>
    claimNames(pod).map(c => `${pod.metadata.namespace}/${c}`),
  );

  protected initialKeys() {
    return this.ctx.store
      .list(CLAIMS, { filter: isProtectedAndDeleted })
      .items.map(keyOf);
  }

  protected keysFor(event: StoreEvent): string[] {
    if (event.resource === CLAIMS)
      return isProtectedAndDeleted(event.object) ? [keyOf(event.object)] : [];
    if (event.resource !== 'pods') return [];
    const pods = [event.object, ...(event.previous ? [event.previous] : [])];
    return [
      ...new Set(
        pods.flatMap(p =>
          claimNames(p).map(c => `${p.metadata.namespace}/${c}`),
        ),
      ),
    ].filter(key => {
      const [namespace, name] = splitKey(key);
      const claim = this.ctx.store.get(CLAIMS, namespace, name);
      return claim !== undefined && isProtectedAndDeleted(claim);
    });
  }

  protected reconcile(key: string) {
    const [namespace, name] = splitKey(key);
    const claim = this.ctx.store.get(CLAIMS, namespace, name);
    if (!claim || !isProtectedAndDeleted(claim) || this.inUse(key)) return;
    removeFinalizer(this.ctx.store, CLAIMS, claim, PVC_PROTECTION);
  }

  /** podUsesPVC: only pods bound to a node count; the kubelet refuses to start new users of a deleted claim. */
  private inUse(claimKey: string) {
    return this.podsByClaim.get(claimKey).some(podKey => {
      const [namespace, name] = splitKey(podKey);
      return !!this.ctx.store.get('pods', namespace, name)?.spec?.nodeName;
    });
  }
}

function isProtectedAndDeleted(claim: KubeObject) {
  return (
    !!claim.metadata.deletionTimestamp && hasFinalizer(claim, PVC_PROTECTION)
  );
}
