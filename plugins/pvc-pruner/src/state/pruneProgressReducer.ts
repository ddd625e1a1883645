/**
 * The pure reducer behind a prune's progress panel: it folds a job's events
 * (as the event stream delivers them) into per-claim state and a summary.
 * No React, no I/O; the PruneProgress component memoizes its result.
 */
import {
  PruneEvent,
  PruneJobStatus,
  PruneSummary,
  PvcOutcome,
} from 'backstage-plugin-pvc-pruner-common';
import type { JobKind } from '../utils/format';

/** A claim the user confirmed for a prune. */
export interface ConfirmedPvc {
  name: string;
  uid: string;
  /** Its size when known (from the orphan list or the job's events). */
  bytes?: number;
}

/** Where one claim is in a running prune. */
export type PvcState =
  | 'pending'
  | 'deleting'
  | 'deleted'
  /** Its deletion was accepted but finalizers still hold it: not deleted. */
  | 'terminating'
  | 'skipped'
  | 'failed';

/** One claim's progress, as its events told it. */
export interface PvcProgress extends ConfirmedPvc {
  state: PvcState;
  /** Why it was skipped or failed. */
  reason?: string;
  /** The latest event message about it. */
  message?: string;
  /** The bound volume and, once known, its fate. */
  volume?: PvcOutcome['volume'];
  /** For a claim still terminating: the finalizers that hold it. */
  finalizers?: string[];
}

/** A prune's progress, derived from its events. */
export interface PruneProgressState {
  pvcs: PvcProgress[];
  /** Claims with a final event: deleted, still terminating, skipped or failed. */
  done: number;
  total: number;
  started: boolean;
  /** The job's final status, from its job-finished event. */
  status?: PruneJobStatus;
  finishedEvent?: PruneEvent;
}

/** The events of each kind of job: the one that says an item is under way, and those that end it. */
const EVENTS_OF: Record<
  JobKind,
  {
    underWay: PruneEvent['type'];
    final: Partial<Record<PruneEvent['type'], PvcState>>;
  }
> = {
  prune: {
    underWay: 'pvc-deleting',
    final: {
      'pvc-deleted': 'deleted',
      'pvc-terminating': 'terminating',
      'pvc-skipped': 'skipped',
      'pvc-failed': 'failed',
    },
  },
  // A reclaim job's items are volumes (in a prune, these events follow a deleted claim's volume).
  reclaim: {
    underWay: 'volume-reclaiming',
    final: {
      'volume-deleted': 'deleted',
      'volume-released': 'terminating',
      'volume-skipped': 'skipped',
      'volume-failed': 'failed',
    },
  },
};

function applyToPvc(
  pvc: PvcProgress,
  event: PruneEvent,
  kind: JobKind,
): PvcProgress {
  const { underWay, final: FINAL } = EVENTS_OF[kind];
  const outcome = event.outcome;
  const next: PvcProgress = { ...pvc, message: event.message };
  if (outcome?.bytes !== undefined) next.bytes = outcome.bytes;
  if (outcome?.volume) next.volume = outcome.volume;
  if (outcome?.finalizers) next.finalizers = outcome.finalizers;
  const final = FINAL[event.type];
  if (final) {
    next.state = final;
    if (outcome?.reason) next.reason = outcome.reason;
  } else if (event.type === underWay && pvc.state === 'pending') {
    next.state = 'deleting';
  }
  return next;
}

/**
 * Folds a job's events into per-claim progress: `done` counts the claims
 * with a pvc-deleted, pvc-terminating, pvc-skipped or pvc-failed event (for
 * a reclaim, the volumes with a volume-* one), over the confirmed count. Events about claims that were not confirmed are listed after them.
 */
export function deriveProgress(
  confirmed: ConfirmedPvc[],
  events: PruneEvent[],
  kind: JobKind = 'prune',
): PruneProgressState {
  const byName = new Map<string, PvcProgress>();
  for (const pvc of confirmed)
    byName.set(pvc.name, { ...pvc, state: 'pending' });
  let started = false;
  let finishedEvent: PruneEvent | undefined;
  for (const event of events) {
    if (event.type === 'job-started') started = true;
    if (event.type === 'job-finished') finishedEvent = event;
    if (!event.pvc) continue;
    const current = byName.get(event.pvc) ?? {
      name: event.pvc,
      uid: event.outcome?.uid ?? '',
      state: 'pending' as const,
    };
    byName.set(event.pvc, applyToPvc(current, event, kind));
  }
  const pvcs = [...byName.values()];
  const done = pvcs.filter(
    p => p.state !== 'pending' && p.state !== 'deleting',
  ).length;
  return {
    pvcs,
    done,
    total: Math.max(confirmed.length, pvcs.length),
    started: started || Boolean(finishedEvent),
    status: finishedEvent?.status,
    finishedEvent,
  };
}

/**
 * The summary the events tell, for use until the job's own summary is read:
 * bytes count as reclaimed when the claim's volume was (or would be) deleted.
 */
export function summaryFromProgress(state: PruneProgressState): PruneSummary {
  const outcome = (p: PvcProgress): PvcOutcome => ({
    name: p.name,
    uid: p.uid,
    ...(p.bytes !== undefined ? { bytes: p.bytes } : {}),
    ...(p.reason ? { reason: p.reason } : {}),
    ...(p.volume ? { volume: p.volume } : {}),
    ...(p.finalizers ? { finalizers: p.finalizers } : {}),
  });
  const deleted = state.pvcs.filter(p => p.state === 'deleted');
  return {
    deleted: deleted.map(outcome),
    terminating: state.pvcs.filter(p => p.state === 'terminating').map(outcome),
    skipped: state.pvcs.filter(p => p.state === 'skipped').map(outcome),
    failed: state.pvcs.filter(p => p.state === 'failed').map(outcome),
    bytesReclaimed: deleted
      .filter(p => p.volume?.fate === 'deleted')
      .reduce((n, p) => n + (p.bytes ?? 0), 0),
  };
}
