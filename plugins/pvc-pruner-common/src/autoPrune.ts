/**
 * The annotation on a catalog entity that opts its StatefulSets' orphaned
 * claims into automatic pruning, with the grace period as its value
 * (`"7d"`, `"36h"`, `"1w2d"`).
 *
 * @public
 */
export const AUTO_PRUNE_ANNOTATION = 'pvc-pruner.backstage.io/auto-prune';

/**
 * The annotation on a PersistentVolumeClaim that keeps it from automatic
 * pruning (any value but `false`), as
 * `kubectl annotate pvc <name> pvc-pruner.backstage.io/keep=true` sets it.
 *
 * @public
 */
export const KEEP_CLAIM_ANNOTATION = 'pvc-pruner.backstage.io/keep';

const UNIT_MS: Record<string, number> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

/** At most this long: a grace past it is a typo (ten years). */
const MAX_DURATION_MS = 3650 * UNIT_MS.d;

/**
 * Reads a duration written as whole seconds, minutes, hours, days and weeks,
 * largest first (`"7d"`, `"1d12h"`, `"90m"`, `"30s"`), in milliseconds; undefined when it
 * does not read as one or is 0 or over ten years.
 *
 * @public
 */
export function parseDuration(value: string): number | undefined {
  const text = value.trim();
  if (text.length === 0 || text.length > 32) return undefined;
  const parts =
    /^(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (!parts || parts.slice(1).every(p => p === undefined)) return undefined;
  const [w, d, h, m, sec] = parts.slice(1).map(p => Number(p ?? 0));
  const ms =
    w * UNIT_MS.w +
    d * UNIT_MS.d +
    h * UNIT_MS.h +
    m * UNIT_MS.m +
    sec * UNIT_MS.s;
  return ms > 0 && ms <= MAX_DURATION_MS ? ms : undefined;
}

/**
 * A duration in milliseconds as the largest units that write it exactly
 * (`"7d"`, `"1d12h"`, `"90m"` reads back as `"1h30m"`).
 *
 * @public
 */
export function formatDuration(ms: number): string {
  let rest = Math.round(ms / UNIT_MS.s) * UNIT_MS.s;
  let text = '';
  for (const unit of ['w', 'd', 'h', 'm', 's']) {
    const n = Math.floor(rest / UNIT_MS[unit]);
    if (n > 0) text += `${n}${unit}`;
    rest -= n * UNIT_MS[unit];
  }
  return text || '0s';
}
