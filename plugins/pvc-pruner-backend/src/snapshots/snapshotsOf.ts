import type { PruneSummary } from 'backstage-plugin-pvc-pruner-common';

/** Each snapshot a job took, by claim, whatever became of the claim (one kept because its snapshot failed names the snapshot left in the cluster): for its audit record. */
export function snapshotsOf(
  summary: PruneSummary,
): Array<{ claim: string; snapshot: string; uid?: string }> {
  return [
    ...summary.deleted,
    ...summary.terminating,
    ...summary.skipped,
    ...summary.failed,
  ].flatMap(o =>
    o.snapshot
      ? [
          {
            claim: o.name,
            snapshot: o.snapshot.name,
            ...(o.snapshot.uid ? { uid: o.snapshot.uid } : {}),
          },
        ]
      : [],
  );
}
