/** Names kubernetes-csi/external-snapshotter uses, and the simulator's own records. */
export const SNAPSHOTS = 'snapshot.storage.k8s.io/volumesnapshots';
export const CONTENTS = 'snapshot.storage.k8s.io/volumesnapshotcontents';
export const SNAPSHOT_CLASSES = 'snapshot.storage.k8s.io/volumesnapshotclasses';
export const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';

/** On a claim while a snapshot of it is not ready to use. */
export const PVC_AS_SOURCE_PROTECTION =
  'snapshot.storage.kubernetes.io/pvc-as-source-protection';
/** On a snapshot while a claim is being restored from it. */
export const SNAPSHOT_AS_SOURCE_PROTECTION =
  'snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection';
/** On a snapshot bound to its content. */
export const SNAPSHOT_BOUND_PROTECTION =
  'snapshot.storage.kubernetes.io/volumesnapshot-bound-protection';
/** On a content until the CSI sidecar has dealt with the physical snapshot. */
export const CONTENT_BOUND_PROTECTION =
  'snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection';
export const ANN_SNAPSHOT_BEING_DELETED =
  'snapshot.storage.kubernetes.io/volumesnapshot-being-deleted';
export const DEFAULT_SNAPSHOT_CLASS_ANNOTATION =
  'snapshot.storage.kubernetes.io/is-default-class';

/**
 * The simulated driver's knobs, on a VolumeSnapshotClass (every snapshot
 * of it) or a VolumeSnapshot (that one): simulated seconds from the cut to
 * readyToUse, and an error the driver fails CreateSnapshot with.
 */
export const ANN_READY_AFTER_SECONDS =
  'kube-sim.io/snapshot-ready-after-seconds';
export const ANN_SNAPSHOT_ERROR = 'kube-sim.io/snapshot-error';

/**
 * What the simulated storage system knows about a snapshot, written on its
 * content when it is created (a real driver keeps this in its backend): the
 * volume, the claim (namespace/name and uid) and the volume whose data it
 * first was (a restored volume's origin carries over).
 */
export const ANN_SOURCE_VOLUME = 'kube-sim.io/source-volume';
export const ANN_SOURCE_CLAIM = 'kube-sim.io/source-claim';
export const ANN_SOURCE_CLAIM_UID = 'kube-sim.io/source-claim-uid';
export const ANN_DATA_ORIGIN = 'kube-sim.io/data-origin-volume';

/** On a volume provisioned from a snapshot: where its data came from. */
export const ANN_RESTORED_FROM_SNAPSHOT = 'kube-sim.io/restored-from-snapshot';
export const ANN_RESTORED_FROM_SNAPSHOT_UID =
  'kube-sim.io/restored-from-snapshot-uid';
export const ANN_RESTORED_FROM_CONTENT = 'kube-sim.io/restored-from-content';
export const ANN_RESTORED_FROM_VOLUME = 'kube-sim.io/restored-from-volume';
export const ANN_RESTORED_FROM_CLAIM_UID =
  'kube-sim.io/restored-from-claim-uid';
