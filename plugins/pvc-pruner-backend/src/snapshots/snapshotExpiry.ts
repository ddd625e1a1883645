import type { VolumeSnapshot } from '../kubernetes/volumeSnapshotTypes';
import { SNAPSHOT_ANNOTATIONS } from './snapshotMetadata';

const DAY_MS = 24 * 60 * 60 * 1000;

/** An ISO 8601 date, or date and time with a zone, as `Date.prototype.toISOString` and RFC 3339 write them. */
const ISO_8601 =
  /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

function parseDate(text: string): Date | undefined {
  if (!ISO_8601.test(text.trim())) return undefined;
  const at = new Date(text.trim());
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/**
 * When one of pvc-pruner's snapshots expires: its creation plus
 * `retentionDays`, or its `pvc-pruner.backstage.io/keep-until` annotation
 * when that is later. A keep-until that is not an ISO 8601 date is returned
 * as written in `keepUntilUnreadable`, and then there is no `expiresAt`: the
 * snapshot is never expired until someone fixes the annotation (its data is
 * what is at stake). Without a creationTimestamp there is no `expiresAt`
 * either.
 */
export function snapshotExpiry(
  snapshot: VolumeSnapshot,
  retentionDays: number,
): { expiresAt?: Date; keepUntil?: Date; keepUntilUnreadable?: string } {
  const written =
    snapshot.metadata?.annotations?.[SNAPSHOT_ANNOTATIONS.keepUntil];
  const keepUntil = written === undefined ? undefined : parseDate(written);
  if (written !== undefined && !keepUntil)
    return { keepUntilUnreadable: written };
  // The API sends a string; client-node's type says Date.
  const created = snapshot.metadata?.creationTimestamp as
    | string
    | Date
    | undefined;
  const createdAt = created === undefined ? undefined : new Date(created);
  if (!createdAt || Number.isNaN(createdAt.getTime()))
    return keepUntil ? { keepUntil } : {};
  const retained = new Date(createdAt.getTime() + retentionDays * DAY_MS);
  const expiresAt =
    keepUntil && keepUntil.getTime() > retained.getTime()
      ? keepUntil
      : retained;
  return { expiresAt, ...(keepUntil ? { keepUntil } : {}) };
}
