import { randomUUID } from 'node:crypto';
import type {
  V1PersistentVolumeClaim,
  V1StorageClass,
} from '@kubernetes/client-node';
import {
  ClusterRequestError,
  type KubeGateway,
  VolumeSnapshot,
  VolumeSnapshotClass,
  VolumeSnapshotContent,
} from '../kubernetes';

/** How the fake snapshot controller treats a new snapshot. */
export type SnapshotBehaviour =
  /** Ready once it has been read this many times (0: ready at once). */
  | { ready: number; restoreSize?: string }
  | { error: string }
  | { never: true }
  /** Ready, but its content points at another snapshot. */
  | { foreignContent: true }
  /** Deleted by hand before it is ready. */
  | { deletedByHand: true };

/**
 * The external-snapshotter and its CRDs in memory, for the snapshot
 * services' tests: it answers the gateway's snapshot calls, and each new
 * snapshot becomes ready (with a content pointing back), fails, or stays
 * pending as `behaviour` says for its claim. Every call is recorded.
 */
export class FakeSnapshotter {
  readonly snapshots = new Map<string, VolumeSnapshot>();
  readonly contents = new Map<string, VolumeSnapshotContent>();
  readonly calls: string[] = [];
  classes: VolumeSnapshotClass[] = [];
  storageClasses: V1StorageClass[] = [];
  behaviour: (claimName: string) => SnapshotBehaviour = () => ({ ready: 0 });
  /** Called as each snapshot's creation arrives (a test's clock). */
  onCreate?: (snapshot: VolumeSnapshot) => void;
  /** Called as each snapshot becomes ready. */
  onReady?: (snapshot: VolumeSnapshot) => void;
  /** The claim as read back after its snapshot (its nth read); none unless told. */
  claimOnRead: (read: number) => V1PersistentVolumeClaim | undefined = () =>
    undefined;
  /** The CSI volume handle of each claim's volume, as its contents record their source. */
  volumeHandleOf: (claimName: string) => string = claimName =>
    `handle-${claimName}`;
  private readonly reads = new Map<string, number>();
  private claimReads = 0;

  readClaim = async (namespace: string, name: string) => {
    this.calls.push(`get claim ${namespace}/${name}`);
    return this.claimOnRead(++this.claimReads);
  };

  createVolumeSnapshot = async (
    namespace: string,
    snapshot: VolumeSnapshot,
    dryRun: boolean,
  ): Promise<VolumeSnapshot> => {
    const name = snapshot.metadata!.name!;
    this.calls.push(`create ${namespace}/${name}${dryRun ? ' dryRun' : ''}`);
    this.onCreate?.(snapshot);
    const key = `${namespace}/${name}`;
    if (this.snapshots.has(key))
      throw new ClusterRequestError(
        'demo',
        `cluster "demo" refused create volumesnapshot ${key}: 409 AlreadyExists`,
        409,
        'AlreadyExists',
      );
    const stored: VolumeSnapshot = structuredClone({
      ...snapshot,
      metadata: { ...snapshot.metadata, namespace, uid: randomUUID() },
      status: { readyToUse: false },
    });
    if (!dryRun) this.snapshots.set(key, stored);
    return structuredClone(stored);
  };

  readVolumeSnapshot = async (
    namespace: string,
    name: string,
  ): Promise<VolumeSnapshot | undefined> => {
    this.calls.push(`get ${namespace}/${name}`);
    const key = `${namespace}/${name}`;
    const snapshot = this.snapshots.get(key);
    if (!snapshot) return undefined;
    const reads = (this.reads.get(key) ?? 0) + 1;
    this.reads.set(key, reads);
    const behaviour = this.behaviour(
      snapshot.spec!.source!.persistentVolumeClaimName!,
    );
    if ('deletedByHand' in behaviour) {
      this.snapshots.delete(key);
      return undefined;
    }
    if ('error' in behaviour)
      snapshot.status = {
        readyToUse: false,
        error: { message: behaviour.error, time: new Date().toISOString() },
      };
    else if ('foreignContent' in behaviour) this.bind(snapshot, '0', true);
    else if ('ready' in behaviour && reads > behaviour.ready)
      this.bind(snapshot, behaviour.restoreSize ?? '1Gi', false);
    return structuredClone(snapshot);
  };

  readVolumeSnapshotContent = async (
    name: string,
  ): Promise<VolumeSnapshotContent | undefined> => {
    this.calls.push(`get content ${name}`);
    const content = this.contents.get(name);
    return content && structuredClone(content);
  };

  listVolumeSnapshotClasses = async () => structuredClone(this.classes);

  readStorageClass = async (name: string) =>
    this.storageClasses.find(sc => sc.metadata?.name === name);

  /** Answers `gateway`'s snapshot calls from this fake (the rest stays the cluster's). */
  serve(gateway: KubeGateway) {
    for (const method of [
      'createVolumeSnapshot',
      'readVolumeSnapshot',
      'readVolumeSnapshotContent',
      'listVolumeSnapshotClasses',
      'readStorageClass',
    ] as const)
      jest.spyOn(gateway, method).mockImplementation(this[method] as any);
  }

  private bind(
    snapshot: VolumeSnapshot,
    restoreSize: string,
    foreign: boolean,
  ) {
    const contentName = `snapcontent-${snapshot.metadata!.uid}`;
    // A content, once cut, stays as it is (a test may then change it).
    if (!this.contents.has(contentName))
      this.contents.set(contentName, {
        metadata: { name: contentName },
        spec: {
          driver: 'csi.example.com',
          deletionPolicy: 'Delete',
          volumeSnapshotClassName: snapshot.spec?.volumeSnapshotClassName,
          source: {
            volumeHandle: this.volumeHandleOf(
              snapshot.spec!.source!.persistentVolumeClaimName!,
            ),
          },
          volumeSnapshotRef: {
            namespace: snapshot.metadata!.namespace,
            name: foreign ? 'someone-elses' : snapshot.metadata!.name,
            uid: foreign ? 'other-uid' : snapshot.metadata!.uid,
          },
        },
        status: { readyToUse: true, snapshotHandle: `snap-${contentName}` },
      });
    const wasReady = snapshot.status?.readyToUse;
    snapshot.status = {
      readyToUse: true,
      boundVolumeSnapshotContentName: contentName,
      restoreSize,
      creationTime: new Date().toISOString(),
    };
    if (!wasReady) this.onReady?.(snapshot);
  }
}
