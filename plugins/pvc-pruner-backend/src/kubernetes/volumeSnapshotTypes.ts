import type { V1ObjectMeta } from '@kubernetes/client-node';

/*
 * The fields pvc-pruner reads and writes of the external-snapshotter's
 * `snapshot.storage.k8s.io/v1` resources (client-node has no types for
 * CRDs). Everything is optional, as a cluster may send anything.
 */

/** A namespaced VolumeSnapshot. */
export interface VolumeSnapshot {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec?: {
    source?: {
      persistentVolumeClaimName?: string;
      volumeSnapshotContentName?: string;
    };
    volumeSnapshotClassName?: string;
  };
  status?: {
    boundVolumeSnapshotContentName?: string;
    creationTime?: string;
    readyToUse?: boolean;
    restoreSize?: string;
    error?: { message?: string; time?: string };
  };
}

/** A cluster-scoped VolumeSnapshotContent, the snapshot's handle on the storage. */
export interface VolumeSnapshotContent {
  metadata?: V1ObjectMeta;
  spec?: {
    driver?: string;
    deletionPolicy?: string;
    volumeSnapshotClassName?: string;
    /** For a dynamically created content: the handle of the volume it was taken of. */
    source?: { volumeHandle?: string; snapshotHandle?: string };
    volumeSnapshotRef?: {
      namespace?: string;
      name?: string;
      uid?: string;
    };
  };
  status?: {
    readyToUse?: boolean;
    restoreSize?: number;
    /** The storage's own id of the snapshot, once the driver has cut it. */
    snapshotHandle?: string;
  };
}

/** A cluster-scoped VolumeSnapshotClass: which CSI driver takes the snapshot, and how. */
export interface VolumeSnapshotClass {
  metadata?: V1ObjectMeta;
  driver?: string;
  deletionPolicy?: string;
  parameters?: Record<string, string>;
}
