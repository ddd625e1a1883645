import type { VolumeSnapshotContent } from '../kubernetes';

/**
 * What is wrong with the VolumeSnapshotContent a snapshot is bound to, for
 * trusting that snapshot: it must exist, not be being deleted, point back at
 * the snapshot (namespace, name and uid: a content can be bound to another
 * one of that name) and be ready with a handle on the storage. Undefined
 * when nothing is. Both a prune (before a delete) and a restore (before a
 * claim is created from it) ask.
 */
export function boundContentProblem(
  snapshot: { namespace: string; name: string; uid: string },
  contentName: string,
  content: VolumeSnapshotContent | undefined,
): string | undefined {
  const { namespace, name, uid } = snapshot;
  if (!content)
    return `VolumeSnapshot ${name} names VolumeSnapshotContent ${contentName}, which does not exist`;
  if (content.metadata?.deletionTimestamp)
    return `VolumeSnapshotContent ${contentName} of VolumeSnapshot ${name} is being deleted`;
  const back = content.spec?.volumeSnapshotRef;
  if (back?.namespace !== namespace || back?.name !== name || back?.uid !== uid)
    return `VolumeSnapshotContent ${contentName} does not point back at VolumeSnapshot ${namespace}/${name} (it names ${
      back?.namespace ?? '?'
    }/${back?.name ?? '?'}, uid ${back?.uid ?? '?'})`;
  if (content.status?.readyToUse !== true || !content.status?.snapshotHandle)
    return `VolumeSnapshotContent ${contentName} is not ready (no readyToUse and snapshotHandle in its status)`;
  return undefined;
}
