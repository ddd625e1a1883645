import {
  parseQuantity,
  type KeptSnapshot,
} from 'backstage-plugin-pvc-pruner-common';
import type { PriceList } from '../cost';
import type { VolumeSnapshot } from '../kubernetes';
import { SNAPSHOT_LABELS, sourceClaimOf } from './snapshotMetadata';
import { snapshotExpiry } from './snapshotExpiry';
import { notReadyReason } from './restorePlan';

const DAY_MS = 86_400_000;

function timeOf(stamp: unknown): Date | undefined {
  // A string on the wire; a Date in client-node's types.
  if (typeof stamp !== 'string' && !(stamp instanceof Date)) return undefined;
  const at = new Date(stamp);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/**
 * One of pvc-pruner's snapshots as the card shows it (`KeptSnapshot`), from
 * the snapshot itself: the list of kept snapshots and the answer to a keep
 * both describe it so.
 */
export function keptSnapshotOf(
  snapshot: VolumeSnapshot,
  options: {
    retentionDays: number;
    prices?: PriceList;
    /** The StatefulSet the caller found it under; else its label. */
    statefulSet?: string;
    /** Why a restore would be refused besides the snapshot's own state (the restore rule, a claim of that name). */
    restoreProblem?: string;
    now?: Date;
  },
): KeptSnapshot {
  const metadata = snapshot.metadata ?? {};
  const labels = metadata.labels ?? {};
  const restoreSize = snapshot.status?.restoreSize;
  const restoreBytes = parseQuantity(restoreSize);
  const monthlyCost =
    restoreBytes === undefined
      ? undefined
      : options.prices?.snapshotMonthlyCost(restoreBytes);
  const expiry = snapshotExpiry(snapshot, options.retentionDays);
  const now = options.now ?? new Date();
  const created = timeOf(metadata.creationTimestamp);
  const notRestorable = notReadyReason(snapshot) ?? options.restoreProblem;
  const error = snapshot.status?.error;
  const statefulSet =
    options.statefulSet ?? labels[SNAPSHOT_LABELS.statefulSet];
  return {
    name: metadata.name ?? '',
    namespace: metadata.namespace ?? '',
    uid: metadata.uid ?? '',
    ...(statefulSet ? { statefulSet } : {}),
    claimName: sourceClaimOf(snapshot),
    ...(labels[SNAPSHOT_LABELS.claimUid]
      ? { claimUid: labels[SNAPSHOT_LABELS.claimUid] }
      : {}),
    ...(labels[SNAPSHOT_LABELS.job]
      ? { jobId: labels[SNAPSHOT_LABELS.job] }
      : {}),
    createdAt: (created ?? now).toISOString(),
    readyToUse: snapshot.status?.readyToUse === true,
    ...(typeof restoreSize === 'string' ? { restoreSize } : {}),
    ...(restoreBytes !== undefined ? { restoreBytes } : {}),
    // Without a creation time (no API server sends one so), the retention is counted from now.
    expiresAt: (
      expiry.expiresAt ??
      new Date(now.getTime() + options.retentionDays * DAY_MS)
    ).toISOString(),
    ...(expiry.keepUntil ? { keepUntil: expiry.keepUntil.toISOString() } : {}),
    ...(expiry.keepUntilUnreadable !== undefined
      ? { keepUntilUnreadable: expiry.keepUntilUnreadable }
      : {}),
    ...(error
      ? {
          error:
            error.message?.slice(0, 1000) ||
            'the snapshot controller reported an error without a message',
        }
      : {}),
    ...(monthlyCost !== undefined ? { monthlyCost } : {}),
    restorable: notRestorable === undefined,
    ...(notRestorable !== undefined ? { notRestorable } : {}),
  };
}
