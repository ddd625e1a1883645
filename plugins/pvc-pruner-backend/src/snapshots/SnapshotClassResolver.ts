import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import {
  ClusterRequestError,
  type KubeGateway,
  type VolumeSnapshotClass,
} from '../kubernetes';

/** The annotation the external-snapshotter reads to find a CSI driver's default VolumeSnapshotClass. */
export const DEFAULT_CLASS_ANNOTATION =
  'snapshot.storage.kubernetes.io/is-default-class';

/** Why an unbound claim gets no snapshot. */
export const UNBOUND_NO_SNAPSHOT =
  'it is not bound to a volume, so it holds no data to snapshot';

/** Which VolumeSnapshotClass a claim's snapshot uses, or why it takes none. */
export type SnapshotClassChoice =
  | { kind: 'class'; name: string; driver?: string }
  /** The volume survives its claim (reclaim policy Retain): a snapshot adds nothing. */
  | { kind: 'not-needed'; reason: string }
  /** No class fits: `pvcPruner.snapshots.required` decides whether the claim is deleted. */
  | { kind: 'none'; reason: string }
  /** The cluster's classes contradict each other or the config: the claim is not deleted. */
  | { kind: 'error'; reason: string };

/** What the choice depends on: the claim's StorageClass and its volume, when it has one. */
export interface SnapshotSource {
  storageClass?: string;
  volume?: {
    name?: string;
    reclaimPolicy?: string;
    /** Present for a CSI volume. */
    csi?: { driver?: string };
    /** Whether the volume's claimRef names this claim's uid: only then does a Retain volume keep its data. */
    boundToClaim: boolean;
  };
}

/** The cluster's reads a resolver needs. */
export type SnapshotClassReads = Pick<
  KubeGateway,
  'readStorageClass' | 'listVolumeSnapshotClasses'
>;

/**
 * Resolves the VolumeSnapshotClass of a claim's snapshot, as the
 * external-snapshotter would, but refusing to guess: the class
 * `pvcPruner.snapshots.storageClasses` maps the claim's StorageClass to, else
 * the one class marked default for the volume's CSI driver (the PV's
 * `spec.csi.driver`, else the StorageClass's provisioner). One resolver per
 * job: the cluster's classes are listed once, when first needed.
 */
export class SnapshotClassResolver {
  private classes?: Promise<VolumeSnapshotClass[]>;
  private readonly provisioners = new Map<
    string,
    Promise<string | undefined>
  >();

  constructor(
    private readonly reads: SnapshotClassReads,
    private readonly classByStorageClass: ReadonlyMap<string, string>,
  ) {}

  resolve(
    claim: V1PersistentVolumeClaim,
    volume: V1PersistentVolume | undefined,
  ): Promise<SnapshotClassChoice> {
    return this.resolveFor({
      storageClass: claim.spec?.storageClassName ?? undefined,
      volume: volume && {
        name: volume.metadata?.name,
        reclaimPolicy: volume.spec?.persistentVolumeReclaimPolicy,
        csi: volume.spec?.csi && { driver: volume.spec.csi.driver },
        // Only a volume bound back to this very claim survives it on its behalf.
        boundToClaim: volume.spec?.claimRef?.uid === claim.metadata?.uid,
      },
    });
  }

  /** The same choice from what a scan reports of the claim and its volume. */
  async resolveFor(source: SnapshotSource): Promise<SnapshotClassChoice> {
    const { storageClass, volume } = source;
    if (volume?.reclaimPolicy === 'Retain' && volume.boundToClaim)
      return {
        kind: 'not-needed',
        reason: `its volume ${volume.name} is kept when the claim is deleted (reclaim policy Retain), so it needs no snapshot`,
      };
    const driver =
      volume?.csi?.driver ??
      (storageClass ? await this.provisionerOf(storageClass) : undefined);
    let classes: VolumeSnapshotClass[];
    try {
      classes = await this.listClasses();
    } catch (e) {
      if (e instanceof ClusterRequestError && e.statusCode === 404)
        return {
          kind: 'none',
          reason:
            'the cluster does not serve VolumeSnapshotClasses (snapshot.storage.k8s.io/v1): install the external-snapshotter (its CRDs and snapshot controller) to take snapshots',
        };
      throw e;
    }
    const mapped = storageClass
      ? this.classByStorageClass.get(storageClass)
      : undefined;
    if (mapped) {
      const where = `pvcPruner.snapshots.storageClasses.${storageClass}`;
      const found = classes.find(c => c.metadata?.name === mapped);
      if (!found)
        return {
          kind: 'error',
          reason: `VolumeSnapshotClass ${mapped} (${where}) does not exist in the cluster`,
        };
      if (driver && found.driver !== driver)
        return {
          kind: 'error',
          reason: `VolumeSnapshotClass ${mapped} (${where}) is for CSI driver ${found.driver}, but the volume's driver is ${driver}`,
        };
      return { kind: 'class', name: mapped, driver: found.driver };
    }
    if (!driver)
      return {
        kind: 'none',
        reason: volume?.csi
          ? 'its volume names no CSI driver'
          : `its volume is not a CSI volume${
              storageClass
                ? ` and StorageClass ${storageClass} names no provisioner`
                : ''
            }, so no VolumeSnapshotClass can take it`,
      };
    const defaults = classes.filter(
      c =>
        c.driver === driver &&
        c.metadata?.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true',
    );
    if (defaults.length > 1)
      return {
        kind: 'error',
        reason: `${
          defaults.length
        } VolumeSnapshotClasses are marked default for CSI driver ${driver}: ${defaults
          .map(c => c.metadata?.name)
          .join(
            ' and ',
          )}; unmark all but one (${DEFAULT_CLASS_ANNOTATION}), or map StorageClass ${
          storageClass ?? '(none)'
        } in pvcPruner.snapshots.storageClasses`,
      };
    if (defaults.length === 0)
      return {
        kind: 'none',
        reason: `no VolumeSnapshotClass is marked default for CSI driver ${driver} (annotate one ${DEFAULT_CLASS_ANNOTATION}: "true"${
          storageClass
            ? `, or map StorageClass ${storageClass} in pvcPruner.snapshots.storageClasses`
            : ''
        })`,
      };
    return { kind: 'class', name: defaults[0].metadata!.name!, driver };
  }

  private listClasses(): Promise<VolumeSnapshotClass[]> {
    // A failed list is asked again for the next claim, not remembered.
    this.classes ??= this.reads.listVolumeSnapshotClasses().catch(e => {
      this.classes = undefined;
      throw e;
    });
    return this.classes;
  }

  private provisionerOf(storageClass: string): Promise<string | undefined> {
    let found = this.provisioners.get(storageClass);
    if (!found) {
      found = this.reads
        .readStorageClass(storageClass)
        .then(sc => sc?.provisioner);
      this.provisioners.set(storageClass, found);
    }
    return found;
  }
}
