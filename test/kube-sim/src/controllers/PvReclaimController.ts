import { KubeObject, StoreEvent } from '../types';
import { Controller, ControllerContext, keyOf } from './Controller';
import { EventRecorder } from './EventRecorder';
import { hasFinalizer, removeFinalizer, tolerate } from './util';
import {
  ANN_BOUND_BY_CONTROLLER,
  ANN_PROVISIONED_BY,
  PROVISIONER_FINALIZER,
  withPhase,
} from './volumes';

const VOLUMES = 'persistentvolumes';
const CLAIMS = 'persistentvolumeclaims';

/**
 * The volume side of the PersistentVolume controller (syncVolume) plus the
 * external provisioner's deleter: volumes become Available, Bound, or
 * Released when their claim is gone; a Released volume with reclaim policy
 * Delete is deleted after a delay (the disk goes with it), Retain keeps it.
 *
 * Every change to a volume is a re-sync, so a Released volume whose policy a
 * client changes from Retain to Delete is reclaimed as one released with
 * Delete: the provisioner deletes what it provisioned, and a volume no
 * provisioner made goes Failed (VolumeFailedDelete) and stays. As
 * sig-storage-lib-external-provisioner's handleProtectionFinalizer does for
 * the CSI volumes it provisioned, the provisioner's finalizer is added to a
 * Bound volume whose policy is Delete and removed from one whose policy is
 * Retain or Recycle.
 */
export class PvReclaimController extends Controller {
  readonly name = 'persistentvolume-reclaimer';
  private readonly volumesByClaim = this.index(VOLUMES, pv => {
    const ref = pv.spec?.claimRef;
    return ref ? [`${ref.namespace}/${ref.name}`] : [];
  });

  private readonly events = new EventRecorder(
    this.ctx.store,
    'persistentvolume-controller',
  );

  constructor(ctx: ControllerContext, private readonly reclaimSeconds: number) {
    super(ctx);
  }

  protected initialKeys() {
    return this.ctx.store.list(VOLUMES).items.map(keyOf);
  }

  protected keysFor(event: StoreEvent): string[] {
    if (event.resource === VOLUMES) {
      if (event.type !== 'DELETED') return [event.object.metadata.name];
      this.forget(event.object.metadata.uid);
      return [];
    }
    if (event.resource === CLAIMS)
      return this.volumesByClaim.get(keyOf(event.object));
    return [];
  }

  protected reconcile(name: string) {
    const store = this.ctx.store;
    const found = store.get(VOLUMES, undefined, name);
    if (!found) return;
    const pv = this.protectionFinalizer(found);
    if (!store.get(VOLUMES, undefined, name)) return;
    const ref = pv.spec.claimRef;
    const phase = pv.status?.phase;
    if (!ref?.uid) {
      // Unbound, or pre-bound by a user to a claim that does not exist yet.
      if (phase !== 'Available' && phase !== 'Failed')
        store.update(VOLUMES, withPhase(pv, 'Available'));
      return;
    }
    const claim = store.get(CLAIMS, ref.namespace, ref.name);
    if (claim && claim.metadata.uid === ref.uid) {
      this.syncWithClaim(pv, claim);
      return;
    }
    if (phase !== 'Released' && phase !== 'Failed') {
      store.update(VOLUMES, withPhase(pv, 'Released'));
      return;
    }
    if (phase === 'Released') this.reclaim(pv);
  }

  /**
   * The external provisioner's finalizer on a CSI volume it provisioned:
   * added while the volume is Bound with policy Delete and not being deleted,
   * removed when the policy is Retain or Recycle (which lets a volume marked
   * for deletion go once nothing else holds it). Returns the volume as stored.
   */
  private protectionFinalizer(pv: KubeObject): KubeObject {
    if (!pv.metadata.annotations?.[ANN_PROVISIONED_BY] || !pv.spec.csi)
      return pv;
    const policy = pv.spec.persistentVolumeReclaimPolicy;
    const has = hasFinalizer(pv, PROVISIONER_FINALIZER);
    if (policy === 'Retain' || policy === 'Recycle')
      return has
        ? removeFinalizer(this.ctx.store, VOLUMES, pv, PROVISIONER_FINALIZER)
        : pv;
    if (
      policy === 'Delete' &&
      !has &&
      !pv.metadata.deletionTimestamp &&
      pv.status?.phase === 'Bound'
    ) {
      const copy = structuredClone(pv);
      copy.metadata.finalizers = [
        ...(copy.metadata.finalizers ?? []),
        PROVISIONER_FINALIZER,
      ];
      return this.ctx.store.update(VOLUMES, copy);
    }
    return pv;
  }

  private syncWithClaim(pv: KubeObject, claim: KubeObject) {
    const store = this.ctx.store;
    const volumeName = claim.spec.volumeName;
    if (volumeName === pv.metadata.name) {
      if (pv.status?.phase !== 'Bound')
        store.update(VOLUMES, withPhase(pv, 'Bound'));
    } else if (volumeName) {
      // The claim went to another volume.
      if (
        pv.metadata.annotations?.[ANN_PROVISIONED_BY] &&
        pv.spec.persistentVolumeReclaimPolicy === 'Delete'
      ) {
        if (pv.status?.phase !== 'Released')
          store.update(VOLUMES, withPhase(pv, 'Released'));
        else this.reclaim(pv);
        return;
      }
      const copy = withPhase(structuredClone(pv), 'Available');
      if (pv.metadata.annotations?.[ANN_BOUND_BY_CONTROLLER]) {
        delete copy.spec.claimRef;
        delete copy.metadata.annotations![ANN_BOUND_BY_CONTROLLER];
      } else {
        delete copy.spec.claimRef.uid;
      }
      store.update(VOLUMES, copy);
    }
    // No volumeName yet: binding is in progress on the claim side.
  }

  private reclaim(pv: KubeObject) {
    const store = this.ctx.store;
    const policy = pv.spec.persistentVolumeReclaimPolicy;
    if (policy !== 'Delete') {
      if (
        pv.metadata.deletionTimestamp &&
        hasFinalizer(pv, PROVISIONER_FINALIZER)
      )
        removeFinalizer(store, VOLUMES, pv, PROVISIONER_FINALIZER);
      return;
    }
    if (!pv.metadata.annotations?.[ANN_PROVISIONED_BY]) {
      // findDeletablePlugin: no provisioner to defer to, and no in-tree
      // plugin deletes this kind of volume. The disk is left, and so is the object.
      const message = `error getting deleter volume plugin for volume "${pv.metadata.name}": no deletable volume plugin matched`;
      const failed = store.update(VOLUMES, withPhase(pv, 'Failed', message));
      this.events.warning(failed, 'VolumeFailedDelete', message);
      return;
    }
    if (
      !this.elapsed(
        pv.metadata.uid,
        'reclaim',
        this.reclaimSeconds,
        pv.metadata.name,
      )
    )
      return;
    // The provisioner has deleted the disk: drop its finalizer, then the object.
    const current = hasFinalizer(pv, PROVISIONER_FINALIZER)
      ? removeFinalizer(store, VOLUMES, pv, PROVISIONER_FINALIZER)
      : pv;
    if (!current.metadata.deletionTimestamp) {
      tolerate([404, 409], () =>
        store.delete(VOLUMES, undefined, pv.metadata.name, {
          preconditions: { uid: pv.metadata.uid },
        }),
      );
    }
  }
}
