import type { VolumeSnapshot } from '../kubernetes';
import { SNAPSHOT_ANNOTATIONS } from './snapshotMetadata';

const DAY_MS = 86_400_000;

/** An ISO 8601 date-time (with a zone) or date, as `Date.toISOString()` and people write it. */
const ISO_8601 =
  /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** When one of pvc-pruner's snapshots expires, and why. */
export interface SnapshotExpiry {
  /**
   * When the snapshot may be deleted: its creation plus the retention, or
   * its keep-until date when that is later. Undefined when the snapshot has
   * no readable creation time (no API server sends one without it): it is
   * then never due.
   */
  expiresAt?: Date;
  /** The keep-until annotation, when set and an ISO 8601 date. */
  keepUntil?: Date;
  /** A keep-until annotation that is not an ISO 8601 date, as written: the snapshot is never due until it is fixed. */
  keepUntilUnreadable?: string;
}

/**
 * When one of pvc-pruner's VolumeSnapshots expires:
 * max(`metadata.creationTimestamp` + `retentionDays`, its
 * `pvc-pruner.backstage.io/keep-until` annotation when that parses). The
 * one rule for the list the card shows and for the task that deletes expired
 * snapshots (which must also spare one whose keep-until is unreadable: see
 * {@link isSnapshotDue}).
 */
export function snapshotExpiry(
  snapshot: Pick<VolumeSnapshot, 'metadata'>,
  retentionDays: number,
): SnapshotExpiry {
  const stamp: unknown = snapshot.metadata?.creationTimestamp;
  // A string on the wire; a Date in client-node's types.
  const created =
    typeof stamp === 'string' || stamp instanceof Date
      ? new Date(stamp).getTime()
      : NaN;
  const retained = Number.isFinite(created)
    ? created + retentionDays * DAY_MS
    : undefined;
  const written =
    snapshot.metadata?.annotations?.[SNAPSHOT_ANNOTATIONS.keepUntil];
  if (written === undefined)
    return retained === undefined ? {} : { expiresAt: new Date(retained) };
  const keep = ISO_8601.test(written.trim()) ? Date.parse(written.trim()) : NaN;
  if (!Number.isFinite(keep))
    return {
      ...(retained === undefined ? {} : { expiresAt: new Date(retained) }),
      keepUntilUnreadable: written.slice(0, 100),
    };
  return {
    ...(retained === undefined
      ? {}
      : { expiresAt: new Date(Math.max(retained, keep)) }),
    keepUntil: new Date(keep),
  };
}

/** Whether a snapshot's expiry has come at `now`: never with an unreadable keep-until or no creation time. */
export function isSnapshotDue(expiry: SnapshotExpiry, now: Date): boolean {
  if (expiry.keepUntilUnreadable !== undefined || !expiry.expiresAt)
    return false;
  return expiry.expiresAt.getTime() <= now.getTime();
}
