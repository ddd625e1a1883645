import type { ClaimKeep } from 'backstage-plugin-pvc-pruner-common';

/** "3 Dec": a day as the card and the logs name it (UTC). */
function day(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? 'an unknown day'
    : date.toLocaleDateString('en-GB', {
        day: 'numeric',
        month: 'short',
        timeZone: 'UTC',
      });
}

/** How every keep's description starts (see isKeepReason). */
const KEPT = 'kept';

/**
 * Whether a claim's reason for not being deleted is a keep's, as
 * describeKeep wrote it: a job held it back because it was kept.
 */
export function isKeepReason(reason: string | undefined): boolean {
  return reason !== undefined && (reason === KEPT || /^kept[ :,]/.test(reason));
}

/**
 * Why a kept claim is not pruned automatically, in one line: "kept by
 * user:default/alice on 3 Dec: <reason>", or by its annotation. The
 * reason was written by a person: it is capped.
 */
export function describeKeep(keep: ClaimKeep): string {
  const reason = (keep.reason ?? '').slice(0, 500);
  if (keep.source === 'annotation')
    return `${KEPT} from automatic pruning: ${reason || 'annotated'}`;
  const who = keep.keptBy ? ` by ${keep.keptBy.slice(0, 200)}` : '';
  const when = keep.keptAt ? ` on ${day(keep.keptAt)}` : '';
  const until = keep.until ? `, until ${day(keep.until)}` : '';
  return `${KEPT}${who}${when}${until}${reason ? `: ${reason}` : ''}`;
}
