import { createContext, useContext } from 'react';
import { KeptSnapshot } from 'backstage-plugin-pvc-pruner-common';

/** A kept snapshot with where it lives: what Restore and Keep send. */
export interface SnapshotEntry {
  cluster: string;
  statefulSet: string;
  snapshot: KeptSnapshot;
}

/** What the card can do with its kept snapshots, wherever it names one (the list, the history). */
export interface SnapshotActions {
  /** The kept snapshot of this uid, as the cluster has it now; undefined when it is gone. */
  find(uid: string): SnapshotEntry | undefined;
  /** Opens the restore dialog; undefined for a user who may not restore. */
  restore?: (entry: SnapshotEntry) => void;
  /** Opens the keep dialog; undefined for a user who may not keep. */
  keep?: (entry: SnapshotEntry) => void;
}

const SnapshotActionsContext = createContext<SnapshotActions>({
  find: () => undefined,
});

export const SnapshotActionsProvider = SnapshotActionsContext.Provider;

/** The card's snapshot actions; outside a card, none. */
export function useSnapshotActions(): SnapshotActions {
  return useContext(SnapshotActionsContext);
}
