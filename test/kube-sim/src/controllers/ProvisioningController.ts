import { randomUUID } from 'node:crypto';
import { labelSelectorMatcher } from '../selectors';
import { KubeObject, StoreEvent } from '../types';
import { Controller, ControllerContext, keyOf, splitKey } from './Controller';
import { EventRecorder } from './EventRecorder';
import { SELECTED_NODE_ANNOTATION } from './PodLifecycleController';
import { NODE_NAME, parseQuantity, tolerate } from './util';
import { snapshotSourceOf } from './SnapshotController';
import {
  ANN_DATA_ORIGIN,
  ANN_RESTORED_FROM_CLAIM_UID,
  ANN_RESTORED_FROM_CONTENT,
  ANN_RESTORED_FROM_SNAPSHOT,
  ANN_RESTORED_FROM_SNAPSHOT_UID,
  ANN_RESTORED_FROM_VOLUME,
  ANN_SOURCE_CLAIM_UID,
  ANN_SOURCE_VOLUME,
  CONTENTS,
  SNAPSHOTS,
} from '../snapshots/constants';
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
  private readonly events = new EventRecorder(
    this.ctx.store,
    'persistentvolume-controller',
  );
  /** One recorder per external provisioner, named as external-provisioner names itself. */
  private readonly provisioners = new Map<string, EventRecorder>();
  /** Claims whose volume the provisioner has started to create. */
  private readonly provisioning = new Set<string>();

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
        this.provisioning.delete(obj.metadata.uid);
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
    if (event.resource === SNAPSHOTS)
      return [...this.unbound].filter(key => {
        const [namespace, name] = splitKey(key);
        const claim = this.ctx.store.get(CLAIMS, namespace, name);
        return (
          namespace === obj.metadata.namespace &&
          claim !== undefined &&
          snapshotSourceOf(claim) === obj.metadata.name
        );
      });
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
    if (!className) {
      this.events.normal(
        claim,
        'FailedBinding',
        'no persistent volumes available for this claim and no storage class is set',
      );
      return;
    }
    if (!storageClass) {
      this.events.warning(
        claim,
        'ProvisioningFailed',
        `storageclass.storage.k8s.io "${className}" not found`,
      );
      return;
    }
    if (storageClass.provisioner === NO_PROVISIONER) return;
    const annotations = claim.metadata.annotations ?? {};
    if (
      storageClass.volumeBindingMode === 'WaitForFirstConsumer' &&
      !annotations[SELECTED_NODE_ANNOTATION]
    ) {
      this.events.normal(
        claim,
        'WaitForFirstConsumer',
        'waiting for first consumer to be created before binding',
      );
      return;
    }
    const provisioner: string = storageClass.provisioner;
    if (annotations[ANN_STORAGE_PROVISIONER] !== provisioner) {
      const copy = structuredClone(claim);
      copy.metadata.annotations = {
        ...annotations,
        [ANN_BETA_STORAGE_PROVISIONER]: provisioner,
        [ANN_STORAGE_PROVISIONER]: provisioner,
      };
      const announced = store.update(CLAIMS, copy);
      this.events.normal(
        announced,
        'ExternalProvisioning',
        `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
      );
      return;
    }
    const external = this.provisionerEvents(provisioner);
    if (!this.provisioning.has(claim.metadata.uid)) {
      this.provisioning.add(claim.metadata.uid);
      external.normal(
        claim,
        'Provisioning',
        `External provisioner is provisioning volume for claim "${claim.metadata.namespace}/${claim.metadata.name}"`,
      );
    }
    const restore = snapshotSourceOf(claim);
    let origin: Record<string, string> | undefined;
    if (restore) {
      const found = this.restoreSource(claim, restore, provisioner);
      if (typeof found === 'string') {
        external.warning(
          claim,
          'ProvisioningFailed',
          `failed to provision volume with StorageClass "${className}": error getting handle for DataSource Type VolumeSnapshot by Name ${restore}: ${found}`,
        );
        return;
      }
      origin = found;
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
    const volume = tolerate([409], () =>
      store.create(VOLUMES, provisionedVolume(claim, storageClass, origin)),
    );
    if (volume)
      external.normal(
        claim,
        'ProvisioningSucceeded',
        `Successfully provisioned volume ${volume.metadata.name}`,
      );
  }

  /**
   * What external-provisioner checks before it restores a snapshot: it is
   * ready, not being deleted, of this driver, and no bigger than the claim
   * (a smaller request fails and the claim stays Pending, retried). Returns
   * the new volume's record of its data's origin, or why not.
   */
  private restoreSource(
    claim: KubeObject,
    name: string,
    provisioner: string,
  ): Record<string, string> | string {
    const store = this.ctx.store;
    const snapshot = store.get(SNAPSHOTS, claim.metadata.namespace, name);
    if (!snapshot)
      return `error getting snapshot ${name} from api server: volumesnapshots.snapshot.storage.k8s.io "${name}" not found`;
    if (snapshot.metadata.deletionTimestamp)
      return `snapshot ${name} is currently being deleted`;
    if (snapshot.status?.readyToUse !== true)
      return `snapshot ${name} is not Ready`;
    const contentName = snapshot.status.boundVolumeSnapshotContentName;
    const content = contentName
      ? store.get(CONTENTS, undefined, contentName)
      : undefined;
    if (
      !content ||
      content.spec?.volumeSnapshotRef?.uid !== snapshot.metadata.uid
    )
      return `snapshot ${name} is not bound to a VolumeSnapshotContent that names it`;
    if (content.spec.driver !== provisioner)
      return `snapshot ${name} was taken by driver ${content.spec.driver}, not by ${provisioner}`;
    const requested = parseQuantity(claim.spec.resources?.requests?.storage);
    const restoreSize = Number(content.status?.restoreSize ?? 0);
    if (requested < restoreSize)
      return `requested volume size ${requested} is less than the size ${restoreSize} for the source snapshot ${name}`;
    const annotations = content.metadata.annotations ?? {};
    return {
      [ANN_RESTORED_FROM_SNAPSHOT]: `${snapshot.metadata.namespace}/${name}`,
      [ANN_RESTORED_FROM_SNAPSHOT_UID]: snapshot.metadata.uid,
      [ANN_RESTORED_FROM_CONTENT]: content.metadata.name,
      ...(annotations[ANN_SOURCE_VOLUME]
        ? { [ANN_RESTORED_FROM_VOLUME]: annotations[ANN_SOURCE_VOLUME] }
        : {}),
      ...(annotations[ANN_SOURCE_CLAIM_UID]
        ? { [ANN_RESTORED_FROM_CLAIM_UID]: annotations[ANN_SOURCE_CLAIM_UID] }
        : {}),
      ...(annotations[ANN_DATA_ORIGIN]
        ? { [ANN_DATA_ORIGIN]: annotations[ANN_DATA_ORIGIN] }
        : {}),
    };
  }

  private provisionerEvents(provisioner: string): EventRecorder {
    let recorder = this.provisioners.get(provisioner);
    if (!recorder) {
      recorder = new EventRecorder(
        this.ctx.store,
        `${provisioner}_${NODE_NAME}_${randomUUID()}`,
      );
      this.provisioners.set(provisioner, recorder);
    }
    return recorder;
  }
}
