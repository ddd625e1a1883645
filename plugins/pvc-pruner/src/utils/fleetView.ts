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
  /** An owner's (totals) or an entity's ({ totals }) claims of deleted StatefulSets. */
  leftBehind?: OrphanTotals | { totals: OrphanTotals };
} & Partial<OrphanTotals>;

const totalsOf = (row: Sortable): OrphanTotals =>
  row.totals ?? (row as OrphanTotals);

const leftBehindOf = (row: Sortable): OrphanTotals | undefined =>
  row.leftBehind && 'totals' in row.leftBehind
    ? row.leftBehind.totals
    : row.leftBehind;

const bytesOf = (t: OrphanTotals) => t.reclaimableBytes + t.retainedBytes;
const monthlyOf = (t: OrphanTotals) =>
  (t.reclaimableMonthlyCost ?? 0) + (t.retainedMonthlyCost ?? 0);

/** Every orphaned byte, reclaimable or on a Retain volume, the claims of deleted StatefulSets included. */
export const storageOf = (row: Sortable) => {
  const left = leftBehindOf(row);
  return bytesOf(totalsOf(row)) + (left ? bytesOf(left) : 0);
};

/** The whole monthly cost: reclaimable, what Retain volumes keep costing, and the claims of deleted StatefulSets. */
export const costOf = (row: Sortable) => {
  const left = leftBehindOf(row);
  return monthlyOf(totalsOf(row)) + (left ? monthlyOf(left) : 0);
};

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
  return [...fleet.owners]
    .sort(by)
    .map(owner => ({
      owner,
      entities: fleet.items
        .filter(
          e =>
            e.owner === owner.owner &&
            (e.statefulSets.length > 0 ||
              (e.leftBehind?.statefulSets.length ?? 0) > 0),
        )
        .sort(by)
        .map(e => ({
          ...e,
          statefulSets: [...e.statefulSets].sort(by),
          ...(e.leftBehind && {
            leftBehind: {
              ...e.leftBehind,
              statefulSets: [...e.leftBehind.statefulSets].sort(by),
            },
          }),
        })),
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
  /** The claims of deleted StatefulSets no entity claims. */
  unownedLeftBehind: FleetStatefulSet[] = [],
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
    'kind',
  ];
  const row = (
    owner: string,
    entity: string,
    s: FleetStatefulSet,
    kind: 'orphans' | 'left-behind' = 'orphans',
  ) => [
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
    kind,
  ];
  const rows = [
    ...groups.flatMap(g =>
      g.entities.flatMap(e => [
        ...e.statefulSets.map(s => row(g.owner.owner ?? '', e.entityRef, s)),
        ...(e.leftBehind?.statefulSets ?? []).map(s =>
          row(g.owner.owner ?? '', e.entityRef, s, 'left-behind'),
        ),
      ]),
    ),
    ...(unowned ?? []).map(s => row('(unowned)', '', s)),
    ...unownedLeftBehind.map(s => row('(unowned)', '', s, 'left-behind')),
  ];
  return `${[header, ...rows]
    .map(r => r.map(csvField).join(','))
    .join('\n')}\n`;
}
