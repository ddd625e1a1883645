import { labelSelectorMatcher } from '../selectors';
import { KubeObject, StoreEvent } from '../types';
import { Controller, ControllerContext, keyOf, splitKey } from './Controller';
import { SELECTED_NODE_ANNOTATION } from './PodLifecycleController';
import { parseQuantity, tolerate } from './util';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_STORAGE_PROVISIONER,
  claimRefTo,
  NO_PROVISIONER,
  provisionedVolume,
  volumeBoundToClaim,
  withPhase,
} from './volumes';

const CLAIMS = 'persistentvolumeclaims';
const VOLUMES = 'persistentvolumes';
const CLASSES = 'storage.k8s.io/storageclasses';
const FREE = '\u0000free';

/**
 * The claim side of the PersistentVolume controller (syncClaim) plus an
 * external provisioner: an unbound claim binds to a pre-bound or matching
 * Available volume, otherwise its StorageClass provisions `pvc-<uid>` after
 * a delay; binding then completes both ways. A bound claim whose volume
 * vanished becomes Lost.
 */
export class ProvisioningController extends Controller {
  readonly name = 'persistentvolume-binder-controller';
  private readonly volumesByClaim = this.index(VOLUMES, pv => {
    const ref = pv.spec?.claimRef;
    return [ref ? `${ref.namespace}/${ref.name}` : FREE];
  });
  private readonly unbound = new Set<string>();

  constructor(
    ctx: ControllerContext,
    private readonly provisioningSeconds: number,
  ) {
    super(ctx);
  }

  protected initialKeys() {
    return this.ctx.store.list(CLAIMS).items.map(claim => {
      if (claim.status?.phase !== 'Bound') this.unbound.add(keyOf(claim));
      return keyOf(claim);
    });
  }

  protected keysFor(event: StoreEvent): string[] {
    const obj = event.object;
    if (event.resource === CLAIMS) {
      const key = keyOf(obj);
      if (event.type === 'DELETED') {
        this.unbound.delete(key);
        this.forget(obj.metadata.uid);
        return [];
      }
      if (obj.status?.phase === 'Bound') this.unbound.delete(key);
      else this.unbound.add(key);
      return [key];
    }
    if (event.resource === VOLUMES) {
      const ref = obj.spec?.claimRef;
      if (ref) return [`${ref.namespace}/${ref.name}`];
      return event.type !== 'DELETED' && obj.status?.phase === 'Available'
        ? [...this.unbound]
        : [];
    }
    if (event.resource === CLASSES) return [...this.unbound];
    return [];
  }

  protected reconcile(key: string) {
    const [namespace, name] = splitKey(key);
    const claim = this.ctx.store.get(CLAIMS, namespace, name);
    if (!claim) return;
    if (claim.spec.volumeName) {
      this.syncVolumeName(claim);
      return;
    }
    if (claim.metadata.deletionTimestamp) return;
    const volume = this.findMatch(claim);
    if (volume) this.bind(claim, volume);
    else this.provision(key, claim);
  }

  /** A claim that names its volume: finish binding, or notice the volume is gone. */
  private syncVolumeName(claim: KubeObject) {
    const store = this.ctx.store;
    const pv = store.get(VOLUMES, undefined, claim.spec.volumeName);
    const bound =
      claim.metadata.annotations?.[ANN_BIND_COMPLETED] !== undefined;
    if (bound && (!pv || pv.spec.claimRef?.uid !== claim.metadata.uid)) {
      if (claim.status?.phase !== 'Lost')
        store.update(CLAIMS, {
          ...claim,
          status: { ...claim.status, phase: 'Lost' },
        });
      return;
    }
    if (!pv || pv.metadata.deletionTimestamp) return;
    if (pv.spec.claimRef && !volumeBoundToClaim(pv, claim)) return;
    if (
      !bound ||
      claim.status?.phase !== 'Bound' ||
      pv.status?.phase !== 'Bound'
    )
      this.bind(claim, pv);
  }

  /** findMatchingVolume: a volume pre-bound to the claim, else the smallest fitting Available one. */
  private findMatch(claim: KubeObject): KubeObject | undefined {
    const store = this.ctx.store;
    const requested = parseQuantity(claim.spec.resources?.requests?.storage);
    const fits = (pv: KubeObject) =>
      !pv.metadata.deletionTimestamp &&
      parseQuantity(pv.spec.capacity?.storage) >= requested;
    for (const name of this.volumesByClaim.get(keyOf(claim))) {
      const pv = store.get(VOLUMES, undefined, name);
      if (pv && volumeBoundToClaim(pv, claim) && fits(pv)) return pv;
    }
    const className = claim.spec.storageClassName ?? '';
    const modes: string[] = claim.spec.accessModes ?? [];
    const selector = claim.spec.selector
      ? labelSelectorMatcher(claim.spec.selector)
      : undefined;
    let best: KubeObject | undefined;
    for (const name of this.volumesByClaim.get(FREE)) {
      const pv = store.get(VOLUMES, undefined, name);
      if (!pv || pv.status?.phase !== 'Available' || !fits(pv)) continue;
      if ((pv.spec.storageClassName ?? '') !== className) continue;
      if (
        (pv.spec.volumeMode ?? 'Filesystem') !==
        (claim.spec.volumeMode ?? 'Filesystem')
      )
        continue;
      if (!modes.every(m => (pv.spec.accessModes ?? []).includes(m))) continue;
      if (selector && !selector(pv.metadata.labels)) continue;
      if (
        !best ||
        parseQuantity(pv.spec.capacity.storage) <
          parseQuantity(best.spec.capacity.storage)
      )
        best = pv;
    }
    return best;
  }

  /** bind(): volume first (claimRef, phase Bound), then the claim (volumeName, annotations, status). */
  private bind(claim: KubeObject, pv: KubeObject) {
    const store = this.ctx.store;
    let volume = pv;
    const refMatches =
      pv.spec.claimRef?.uid === claim.metadata.uid &&
      volumeBoundToClaim(pv, claim);
    if (!refMatches || pv.status?.phase !== 'Bound') {
      const copy = withPhase(structuredClone(pv), 'Bound');
      if (!refMatches) copy.spec.claimRef = claimRefTo(claim);
      if (!volumeBoundToClaim(pv, claim)) {
        copy.metadata.annotations = {
          ...copy.metadata.annotations,
          [ANN_BOUND_BY_CONTROLLER]: 'yes',
        };
      }
      volume = store.update(VOLUMES, copy);
    }
    const copy = structuredClone(claim);
    const annotations = { ...copy.metadata.annotations };
    if (copy.spec.volumeName !== volume.metadata.name) {
      copy.spec.volumeName = volume.metadata.name;
      annotations[ANN_BOUND_BY_CONTROLLER] = 'yes';
    }
    annotations[ANN_BIND_COMPLETED] = 'yes';
    copy.metadata.annotations = annotations;
    copy.status = {
      phase: 'Bound',
      accessModes: [...(volume.spec.accessModes ?? [])],
      capacity: { ...volume.spec.capacity },
    };
    store.update(CLAIMS, copy);
  }

  /** Dynamic provisioning: announce the provisioner on the claim, then create the volume after a delay. */
  private provision(key: string, claim: KubeObject) {
    const store = this.ctx.store;
    const className = claim.spec.storageClassName;
    const storageClass = className
      ? store.get(CLASSES, undefined, className)
      : undefined;
    if (!storageClass || storageClass.provisioner === NO_PROVISIONER) return;
    const annotations = claim.metadata.annotations ?? {};
    if (
      storageClass.volumeBindingMode === 'WaitForFirstConsumer' &&
      !annotations[SELECTED_NODE_ANNOTATION]
    )
      return;
    if (annotations[ANN_STORAGE_PROVISIONER] !== storageClass.provisioner) {
      const copy = structuredClone(claim);
      copy.metadata.annotations = {
        ...annotations,
        [ANN_BETA_STORAGE_PROVISIONER]: storageClass.provisioner,
        [ANN_STORAGE_PROVISIONER]: storageClass.provisioner,
      };
      store.update(CLAIMS, copy);
      return;
    }
    if (
      !this.elapsed(
        claim.metadata.uid,
        'provision',
        this.provisioningSeconds,
        key,
      )
    )
      return;
    tolerate([409], () =>
      store.create(VOLUMES, provisionedVolume(claim, storageClass)),
    );
  }
}
