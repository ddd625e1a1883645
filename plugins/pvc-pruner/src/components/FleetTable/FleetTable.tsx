import { ReactNode } from 'react';
import {
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TableSortLabel,
  Typography,
  makeStyles,
} from '@material-ui/core';
import { Link } from '@backstage/core-components';
import { parseEntityRef } from '@backstage/catalog-model';
import {
  FleetLeftBehind,
  FleetStatefulSet,
  OrphanTotals,
  formatBytes,
} from 'backstage-plugin-pvc-pruner-common';
import { FleetSort, FleetSortKey } from '../../utils/fleetView';
import { formatMonthly } from '../../utils/money';
import { seenOrphanedSince } from '../../utils/sightings';
import { EntityLinks } from '../EntityLinks';

const useStyles = makeStyles(theme => ({
  owner: { backgroundColor: theme.palette.background.default },
  entity: { paddingLeft: theme.spacing(3) },
  statefulSet: { paddingLeft: theme.spacing(6) },
  muted: { color: theme.palette.text.secondary },
  detail: { backgroundColor: theme.palette.background.default },
  // Wide content (the card's orphan table) fits the table instead of widening it.
  detailContent: { width: 0, minWidth: '100%', overflowX: 'auto' },
}));

/**
 * An action on each StatefulSet right under a group (the unowned section's
 * prune), and what it opens under the row.
 */
export interface FleetStatefulSetAction {
  /** The column's header. */
  title: string;
  render: (statefulSet: FleetStatefulSet) => ReactNode;
  /** What is open under the row; undefined when nothing is. */
  detail: (statefulSet: FleetStatefulSet) => ReactNode | undefined;
}

/** Props of {@link FleetTable}. */
export interface FleetTableProps {
  /** The section's accessible name, e.g. "Reclaimable storage by owner". */
  label: string;
  groups: Array<{
    key: string;
    title: ReactNode;
    totals: OrphanTotals;
    firstSeenOrphanedAt?: string;
    /** The claims deleted StatefulSets left, of the group's entities: a kind of their own, beside `totals`. */
    leftBehind?: OrphanTotals;
    entities: Array<{
      entityRef: string;
      title: ReactNode;
      totals: OrphanTotals;
      firstSeenOrphanedAt?: string;
      statefulSets: FleetStatefulSet[];
      leftBehind?: FleetLeftBehind;
    }>;
    /** StatefulSets right under the group (the unowned section). */
    statefulSets?: FleetStatefulSet[];
  }>;
  sort: FleetSort;
  onSort: (key: FleetSortKey) => void;
  /** Set when the backend priced the answer. */
  currency?: string;
  statefulSetAction?: FleetStatefulSetAction;
}

/** A muted line under a cell's figure. */
function Caption(props: { children: ReactNode }) {
  const classes = useStyles();
  return (
    <Typography variant="caption" component="div" className={classes.muted}>
      {props.children}
    </Typography>
  );
}

const leftBehindBytes = (t: OrphanTotals) =>
  t.reclaimableBytes + t.retainedBytes;
const leftBehindCost = (t: OrphanTotals) =>
  t.reclaimableMonthlyCost === undefined
    ? undefined
    : t.reclaimableMonthlyCost + (t.retainedMonthlyCost ?? 0);

function Storage({
  totals,
  leftBehind,
}: {
  totals: OrphanTotals;
  leftBehind?: OrphanTotals;
}) {
  return (
    <>
      {formatBytes(totals.reclaimableBytes)}
      {totals.retainedBytes > 0 && (
        <Caption>
          + {formatBytes(totals.retainedBytes)} on Retain volumes
        </Caption>
      )}
      {leftBehind && (
        <Caption>
          + {formatBytes(leftBehindBytes(leftBehind))} of deleted StatefulSets
        </Caption>
      )}
    </>
  );
}

function Cost({
  totals,
  leftBehind,
  currency,
}: {
  totals: OrphanTotals;
  leftBehind?: OrphanTotals;
  currency: string;
}) {
  if (totals.reclaimableMonthlyCost === undefined) return null;
  const leftBehindMonthly = leftBehind && leftBehindCost(leftBehind);
  return (
    <>
      {formatMonthly(totals.reclaimableMonthlyCost, currency)}
      {(totals.retainedMonthlyCost ?? 0) > 0 && (
        <Caption>
          + {formatMonthly(totals.retainedMonthlyCost!, currency)} that Retain
          volumes keep costing after a prune
        </Caption>
      )}
      {leftBehindMonthly !== undefined && (
        <Caption>
          + {formatMonthly(leftBehindMonthly, currency)} of deleted StatefulSets
        </Caption>
      )}
    </>
  );
}

function Row(props: {
  name: ReactNode;
  nameClass: string;
  rowClass?: string;
  totals: OrphanTotals;
  /** Claims of deleted StatefulSets, shown apart from `totals`. */
  leftBehind?: OrphanTotals;
  firstSeenOrphanedAt?: string;
  currency?: string;
  strong?: boolean;
  /** Renders the action column: this row's action, or an empty cell. */
  action?: { cell?: ReactNode };
}) {
  const { totals, leftBehind, currency } = props;
  const text = (node: ReactNode) => (
    <Typography
      variant="body2"
      component="div"
      style={props.strong ? { fontWeight: 600 } : undefined}
    >
      {node}
    </Typography>
  );
  return (
    <TableRow className={props.rowClass}>
      <TableCell className={props.nameClass}>{text(props.name)}</TableCell>
      <TableCell align="right">
        {text(totals.orphans)}
        {leftBehind && <Caption>+ {leftBehind.orphans} left behind</Caption>}
      </TableCell>
      <TableCell>
        {text(<Storage totals={totals} leftBehind={leftBehind} />)}
      </TableCell>
      {currency && (
        <TableCell>
          {text(
            <Cost
              totals={totals}
              leftBehind={leftBehind}
              currency={currency}
            />,
          )}
        </TableCell>
      )}
      <TableCell>
        {text(seenOrphanedSince(props.firstSeenOrphanedAt) ?? '—')}
      </TableCell>
      {props.action && <TableCell align="right">{props.action.cell}</TableCell>}
    </TableRow>
  );
}

const statefulSetName = (s: FleetStatefulSet) =>
  `${s.cluster} · ${s.namespace}/${s.name}`;

/** A StatefulSet's name, and the other entities that claim it, if any. */
function StatefulSetName(props: {
  statefulSet: FleetStatefulSet;
  muted?: boolean;
}) {
  const { statefulSet: s } = props;
  const classes = useStyles();
  return (
    <>
      <span className={props.muted ? classes.muted : undefined}>
        {statefulSetName(s)}
      </span>
      {s.sharedWith && s.sharedWith.length > 0 && (
        <Typography variant="caption" component="div" className={classes.muted}>
          Also claimed by <EntityLinks entityRefs={s.sharedWith} max={5} /> ·
          counted once in owner and fleet totals
        </Typography>
      )}
    </>
  );
}

/** A deleted StatefulSet's name, marked as such, and what vouches for its claims. */
function LeftBehindName(props: {
  statefulSet: FleetLeftBehind['statefulSets'][number];
}) {
  const { statefulSet: s } = props;
  const classes = useStyles();
  return (
    <>
      <span className={classes.muted}>{statefulSetName(s)}</span>
      <Caption>
        deleted StatefulSet ·{' '}
        {s.evidence === 'lineage'
          ? 'its claims, as recorded'
          : 'claims known by name and labels only'}{' '}
        · prune them from the entity's card
      </Caption>
    </>
  );
}

/**
 * Owners, each with its entities and their StatefulSets: orphans, storage,
 * monthly cost and first sighting per row, sortable by the last three.
 */
export function FleetTable(props: FleetTableProps) {
  const { groups, sort, onSort, currency, statefulSetAction } = props;
  const classes = useStyles();
  const columns = (currency ? 5 : 4) + (statefulSetAction ? 1 : 0);
  const noAction = statefulSetAction ? {} : undefined;
  const header = (key: FleetSortKey, title: string) => (
    <TableCell
      sortDirection={sort.key === key && (sort.descending ? 'desc' : 'asc')}
    >
      <TableSortLabel
        active={sort.key === key}
        direction={sort.key === key && !sort.descending ? 'asc' : 'desc'}
        onClick={() => onSort(key)}
      >
        {title}
      </TableSortLabel>
    </TableCell>
  );
  return (
    <Table size="small" aria-label={props.label}>
      <TableHead>
        <TableRow>
          <TableCell>Owner · entity · StatefulSet</TableCell>
          <TableCell align="right" style={{ whiteSpace: 'nowrap' }}>
            Orphans
          </TableCell>
          {header('storage', 'Reclaimable storage')}
          {currency && header('cost', 'Monthly cost')}
          {header('seen', 'Seen orphaned')}
          {statefulSetAction && (
            <TableCell align="right">{statefulSetAction.title}</TableCell>
          )}
        </TableRow>
      </TableHead>
      <TableBody>
        {groups.map(group => [
          <Row
            key={group.key}
            name={group.title}
            nameClass=""
            rowClass={classes.owner}
            totals={group.totals}
            leftBehind={group.leftBehind}
            firstSeenOrphanedAt={group.firstSeenOrphanedAt}
            currency={currency}
            strong
            action={noAction}
          />,
          ...group.entities.flatMap(entity => [
            <Row
              key={entity.entityRef}
              name={entity.title}
              nameClass={classes.entity}
              totals={entity.totals}
              leftBehind={entity.leftBehind?.totals}
              firstSeenOrphanedAt={entity.firstSeenOrphanedAt}
              currency={currency}
              action={noAction}
            />,
            ...entity.statefulSets.map(s => (
              <Row
                key={`${entity.entityRef} ${statefulSetName(s)}`}
                name={<StatefulSetName statefulSet={s} muted />}
                nameClass={classes.statefulSet}
                totals={s}
                firstSeenOrphanedAt={s.firstSeenOrphanedAt}
                currency={currency}
                action={noAction}
              />
            )),
            ...(entity.leftBehind?.statefulSets ?? []).map(s => (
              <Row
                key={`${entity.entityRef} ${statefulSetName(s)} ${s.evidence}`}
                name={<LeftBehindName statefulSet={s} />}
                nameClass={classes.statefulSet}
                totals={s}
                firstSeenOrphanedAt={s.firstSeenOrphanedAt}
                currency={currency}
                action={noAction}
              />
            )),
          ]),
          ...(group.statefulSets ?? []).flatMap(s => {
            const key = `${group.key} ${statefulSetName(s)}`;
            const detail = statefulSetAction?.detail(s);
            return [
              <Row
                key={key}
                name={<StatefulSetName statefulSet={s} />}
                nameClass={classes.entity}
                totals={s}
                firstSeenOrphanedAt={s.firstSeenOrphanedAt}
                currency={currency}
                action={
                  statefulSetAction && { cell: statefulSetAction.render(s) }
                }
              />,
              ...(detail
                ? [
                    <TableRow key={`${key} detail`} className={classes.detail}>
                      <TableCell colSpan={columns}>
                        <div className={classes.detailContent}>{detail}</div>
                      </TableCell>
                    </TableRow>,
                  ]
                : []),
            ];
          }),
        ])}
      </TableBody>
    </Table>
  );
}

/** "checkout" for group:default/checkout, "ops/checkout" in another namespace: what the fleet page calls an entity. */
function shortName(ref: string): string {
  const { namespace, name } = parseEntityRef(ref);
  return namespace === 'default' ? name : `${namespace}/${name}`;
}

/** The owner's short name; "No owner" without one. */
export function ownerTitle(owner: string | undefined): string {
  return owner ? shortName(owner) : 'No owner';
}

/** The entity's title or short name, linked to its Kubernetes page. */
export function EntityLink(props: {
  to: string;
  entityRef: string;
  title?: string;
}) {
  return <Link to={props.to}>{props.title ?? shortName(props.entityRef)}</Link>;
}
