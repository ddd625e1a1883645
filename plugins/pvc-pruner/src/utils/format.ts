import {
  OrphanedPvc,
  PruneSummary,
  StatefulSetOrphans,
  claimBytes,
  formatBytes,
} from 'backstage-plugin-pvc-pruner-common';

export { claimBytes };

/** "20 GiB" for a claim, from its bound capacity or its request. */
export function claimSize(
  pvc: Pick<OrphanedPvc, 'capacityBytes' | 'requestedBytes'>,
): string {
  return formatBytes(claimBytes(pvc));
}

/** "runs ordinals 0–2", "runs ordinal 0", or "runs no pods". */
export function ordinalsText(
  sts: Pick<StatefulSetOrphans, 'ordinals'>,
): string {
  const { start, end } = sts.ordinals;
  if (end <= start) return 'runs no pods';
  if (end - start === 1) return `runs ordinal ${start}`;
  return `runs ordinals ${start}–${end - 1}`;
}

/** The pod the StatefulSet controller would create for an ordinal. */
export function podName(statefulSet: string, ordinal: number): string {
  return `${statefulSet}-${ordinal}`;
}

/** A short age such as "45s", "12m", "5h" or "3d". */
export function formatAge(
  iso: string | undefined,
  now: number = Date.now(),
): string {
  if (!iso) return 'unknown age';
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return 'unknown age';
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h`;
  return `${Math.floor(hours / 24)}d`;
}

/** Claims by name, in their order: all of them when few, else the first and last and how many. */
export function claimNamesInShort(names: string[]): string {
  if (names.length <= 3) return names.join(', ');
  return `${names[0]} … ${names[names.length - 1]} (${names.length} claims)`;
}

/** "3 claims", "1 claim". */
export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** A date and time for people, in their locale. */
export function formatTime(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export const DAY_MS = 24 * 60 * 60 * 1000;

/** YYYY-MM-DD of a time, as a date input takes it (UTC, as the backend compares). */
export function dateOnly(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The end of a date input's day, so "keep until the 9th" keeps through the 9th. */
export function endOfDay(date: string): string {
  return `${date}T23:59:59.000Z`;
}

/** What a job does: prunes claims, or reclaims Released volumes. */
export type JobKind = 'prune' | 'reclaim';

/** "Prune", "Dry run", "Reclaim" or "Dry run of a reclaim". */
export function jobTitle(dryRun: boolean, kind?: JobKind): string {
  if (kind === 'reclaim') return dryRun ? 'Dry run of a reclaim' : 'Reclaim';
  return dryRun ? 'Dry run' : 'Prune';
}

/**
 * "4 deleted, 1 still terminating, 0 skipped, 0 failed" (for a reclaim, "4
 * reclaimed, 1 not seen deleted yet, …"): a job's counts as the backend words
 * them. Those still terminating are named only when there are some (`?? []`:
 * an older backend replica may answer without them).
 */
export function summaryCounts(
  summary: PruneSummary,
  dryRun: boolean,
  kind?: JobKind,
): string {
  const terminating = summary.terminating ?? [];
  const reclaim = kind === 'reclaim';
  const done = reclaim ? 'reclaimed' : 'deleted';
  const pending = reclaim ? 'not seen deleted yet' : 'still terminating';
  return `${summary.deleted.length} ${dryRun ? `would be ${done}` : done}, ${
    terminating.length > 0 ? `${terminating.length} ${pending}, ` : ''
  }${summary.skipped.length} skipped, ${summary.failed.length} failed`;
}
