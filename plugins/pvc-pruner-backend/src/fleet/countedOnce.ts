import {
  FleetStatefulSet,
  OrphanTotals,
} from 'backstage-plugin-pvc-pruner-common';
import { firstSeenOf, sumTotals } from '../orphans';

/** A StatefulSet's row under one entity, with what identifies the StatefulSet across rows. */
export interface FleetRow {
  /** Cluster and uid: the same StatefulSet under several entities has one key. */
  key: string;
  row: FleetStatefulSet;
}

/**
 * The totals of rows, each StatefulSet counted once however many entities
 * it is listed under (it has several claimants).
 */
export function countedOnce(
  rows: FleetRow[],
  priced: boolean,
): {
  statefulSets: number;
  totals: OrphanTotals;
  firstSeenOrphanedAt?: string;
} {
  const unique = new Map<string, FleetStatefulSet>();
  for (const { key, row } of rows) if (!unique.has(key)) unique.set(key, row);
  const once = [...unique.values()];
  return {
    statefulSets: once.length,
    totals: sumTotals(once, priced),
    ...firstSeenOf(once),
  };
}
