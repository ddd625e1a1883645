import { PropsWithChildren, useMemo, useState } from 'react';
import { SnapshotsResponse } from 'backstage-plugin-pvc-pruner-common';
import {
  SnapshotActions,
  SnapshotActionsProvider,
  SnapshotEntry,
} from '../../hooks/SnapshotActionsContext';
import { KeepSnapshotDialog } from '../KeepSnapshotDialog';
import { RestoreDialog } from '../RestoreDialog';
import { SnapshotList } from '../SnapshotList';

/** Props of {@link SnapshotsScope}. */
export interface SnapshotsScopeProps {
  entityRef: string;
  snapshots: { value?: SnapshotsResponse; error?: Error };
  /** Show the Snapshots list (snapshots are enabled, or some are kept). */
  showList: boolean;
  /** Why this user may not restore or keep (they may not prune); undefined when they may. */
  deniedReason?: string;
  /** After a restore or a keep: the card reloads its claims, snapshots and history. */
  onChanged: () => void;
}

/**
 * The card's kept snapshots and what can be done with them: the Snapshots
 * list, and Restore and Keep wherever the card names a snapshot (the list,
 * and each prune's outcome in the history, its children).
 */
export function SnapshotsScope(props: PropsWithChildren<SnapshotsScopeProps>) {
  const { entityRef, snapshots, showList, deniedReason, onChanged, children } =
    props;
  const [restoring, setRestoring] = useState<SnapshotEntry>();
  const [keeping, setKeeping] = useState<SnapshotEntry>();
  const [restoredMessage, setRestoredMessage] = useState<string>();
  const actions = useMemo<SnapshotActions>(() => {
    const byUid = new Map<string, SnapshotEntry>();
    for (const cluster of snapshots.value?.clusters ?? [])
      if (cluster.ok)
        for (const sts of cluster.statefulSets)
          for (const snapshot of sts.snapshots)
            byUid.set(snapshot.uid, {
              cluster: cluster.cluster,
              statefulSet: sts.name,
              snapshot,
            });
    return {
      find: uid => byUid.get(uid),
      ...(deniedReason ? {} : { restore: setRestoring, keep: setKeeping }),
    };
  }, [snapshots.value, deniedReason]);
  return (
    <SnapshotActionsProvider value={actions}>
      {showList && (
        <SnapshotList
          value={snapshots.value}
          error={snapshots.error}
          restoredMessage={restoredMessage}
        />
      )}
      {children}
      <RestoreDialog
        entityRef={entityRef}
        entry={restoring}
        onClose={() => setRestoring(undefined)}
        onRestored={response => {
          setRestoring(undefined);
          setRestoredMessage(
            `Restored ${response.claim.name} from ${response.snapshot}: ${response.message}.`,
          );
          onChanged();
        }}
      />
      <KeepSnapshotDialog
        entityRef={entityRef}
        entry={keeping}
        onClose={() => setKeeping(undefined)}
        onKept={() => {
          setKeeping(undefined);
          onChanged();
        }}
      />
    </SnapshotActionsProvider>
  );
}
