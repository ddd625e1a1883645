import {
  FleetEntity,
  FleetOwner,
  FleetResponse,
  FleetStatefulSet,
  OrphanTotals,
} from 'backstage-plugin-pvc-pruner-common';

/** What the fleet page sorts by: orphaned storage, its monthly cost, or how long it was seen orphaned. */
export type FleetSortKey = 'storage' | 'cost' | 'seen';

export interface FleetSort {
  key: FleetSortKey;
  /** Largest, most expensive or longest-seen first when descending. */
  descending: boolean;
}

type Sortable = {
  totals?: OrphanTotals;
  firstSeenOrphanedAt?: string;
} & Partial<OrphanTotals>;

const totalsOf = (row: Sortable): OrphanTotals =>
  row.totals ?? (row as OrphanTotals);

/** Every orphaned byte, reclaimable or on a Retain volume. */
export const storageOf = (row: Sortable) =>
  totalsOf(row).reclaimableBytes + totalsOf(row).retainedBytes;

/** The whole monthly cost of the orphans: reclaimable plus what Retain volumes keep costing. */
export const costOf = (row: Sortable) =>
  (totalsOf(row).reclaimableMonthlyCost ?? 0) +
  (totalsOf(row).retainedMonthlyCost ?? 0);

/** Sorts after every ISO timestamp. */
const NOT_SEEN_BEFORE = '\uffff';

function compare(sort: FleetSort) {
  return (a: Sortable, b: Sortable) => {
    let order: number;
    if (sort.key === 'seen') {
      // Seen longest ago first when descending; an orphan never seen before was first seen just now.
      const x = a.firstSeenOrphanedAt ?? NOT_SEEN_BEFORE;
      const y = b.firstSeenOrphanedAt ?? NOT_SEEN_BEFORE;
      // Older timestamps rank higher: longer seen orphaned.
      order = Number(x < y) - Number(x > y);
    } else {
      const value = sort.key === 'cost' ? costOf : storageOf;
      order = value(a) - value(b);
    }
    return sort.descending ? -order : order;
  };
}

export interface FleetEntityRow extends FleetEntity {
  statefulSets: FleetStatefulSet[];
}

export interface FleetGroup {
  owner: FleetOwner;
  entities: FleetEntityRow[];
}

/** The fleet as the page shows it: owners, their entities and StatefulSets, each level sorted. */
export function fleetGroups(
  fleet: FleetResponse,
  sort: FleetSort,
): FleetGroup[] {
  const by = compare(sort);
  // Entities with only claims of deleted StatefulSets are in their own section (LeftBehindFleet).
  return [...fleet.owners]
    .sort(by)
    .map(owner => ({
      owner,
      entities: fleet.items
        .filter(e => e.owner === owner.owner && e.statefulSets.length > 0)
        .sort(by)
        .map(e => ({ ...e, statefulSets: [...e.statefulSets].sort(by) })),
    }))
    .filter(g => g.entities.length > 0);
}

/** The unowned StatefulSets, sorted as the page shows them. */
export function sortedUnowned(
  fleet: FleetResponse,
  sort: FleetSort,
): FleetStatefulSet[] {
  return [...(fleet.unowned?.statefulSets ?? [])].sort(compare(sort));
}

const GIB = 2 ** 30;

/** How a cell starts when a spreadsheet would run it as a formula (OWASP's CSV injection rule). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell. Names come from catalog authors and clusters, so a cell that
 * a spreadsheet would run as a formula is prefixed with a single quote and
 * quoted, as OWASP advises. The numeric columns (counts, GiB, costs) are never
 * negative, so no number starts that way and every number stays a number.
 */
function csvField(value: string | number | undefined): string {
  if (value === undefined) return '';
  let text = String(value);
  const formula = FORMULA_START.test(text);
  if (formula) text = `'${text}`;
  return formula || /[",\n\r]/.test(text)
    ? `"${text.replace(/"/g, '""')}"`
    : text;
}

/**
 * The rows the page shows, one per StatefulSet, in its order: owners'
 * entities, then the unowned section when it is shown. Costs are the
 * backend's, rounded to cents; without pricing there are no cost columns.
 * A StatefulSet that several entities claim has a row under each of them,
 * with the others' refs in `shared_with` (space-separated), so a sum over
 * the rows counts it once per row.
 */
export function fleetCsv(
  groups: FleetGroup[],
  unowned: FleetStatefulSet[] | undefined,
  currency: string | undefined,
): string {
  const header = [
    'owner',
    'entity',
    'cluster',
    'namespace',
    'statefulset',
    'orphans',
    'reclaimable_gib',
    'retained_gib',
    ...(currency
      ? [
          `reclaimable_monthly_cost_${currency}`,
          `retained_monthly_cost_${currency}`,
        ]
      : []),
    'first_seen_orphaned_at',
    'shared_with',
  ];
  const row = (owner: string, entity: string, s: FleetStatefulSet) => [
    owner,
    entity,
    s.cluster,
    s.namespace,
    s.name,
    s.orphans,
    (s.reclaimableBytes / GIB).toFixed(2),
    (s.retainedBytes / GIB).toFixed(2),
    ...(currency
      ? [
          s.reclaimableMonthlyCost?.toFixed(2),
          s.retainedMonthlyCost?.toFixed(2),
        ]
      : []),
    s.firstSeenOrphanedAt,
    s.sharedWith?.join(' '),
  ];
  const rows = [
    ...groups.flatMap(g =>
      g.entities.flatMap(e =>
        e.statefulSets.map(s => row(g.owner.owner ?? '', e.entityRef, s)),
      ),
    ),
    ...(unowned ?? []).map(s => row('(unowned)', '', s)),
  ];
  return `${[header, ...rows]
    .map(r => r.map(csvField).join(','))
    .join('\n')}\n`;
}
