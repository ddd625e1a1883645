const DAY_MS = 86_400_000;

/**
 * What pvc-pruner knows about how long a claim has been orphaned: only when
 * it first saw it so. The claim may have been left behind long before
 * pvc-pruner was installed, so this never says "orphaned since".
 * "seen orphaned since 3 Nov (at least 27 days)".
 */
export function seenOrphanedSince(
  firstSeenIso: string | undefined,
  now: number = Date.now(),
): string | undefined {
  if (!firstSeenIso) return undefined;
  const seen = new Date(firstSeenIso);
  if (Number.isNaN(seen.getTime())) return undefined;
  const days = Math.floor((now - seen.getTime()) / DAY_MS);
  const date = seen.toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'short',
    ...(seen.getFullYear() === new Date(now).getFullYear()
      ? {}
      : { year: 'numeric' }),
  });
  const atLeast =
    days < 1
      ? 'less than a day'
      : `at least ${days} day${days === 1 ? '' : 's'}`;
  return `seen orphaned since ${date} (${atLeast})`;
}

/** Whole days since the first sighting, for sorting and CSV; undefined when never seen. */
export function daysSeenOrphaned(
  firstSeenIso: string | undefined,
  now: number = Date.now(),
): number | undefined {
  if (!firstSeenIso) return undefined;
  const seen = Date.parse(firstSeenIso);
  return Number.isNaN(seen) ? undefined : Math.floor((now - seen) / DAY_MS);
}
