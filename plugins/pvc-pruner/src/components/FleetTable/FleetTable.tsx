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
  FleetStatefulSet,
  OrphanTotals,
  formatBytes,
} from 'backstage-plugin-pvc-pruner-common';
import { FleetSort, FleetSortKey } from '../../utils/fleetView';
import { formatMonthly } from '../../utils/money';
import { seenOrphanedSince } from '../../utils/sightings';

const useStyles = makeStyles(theme => ({
  owner: { backgroundColor: theme.palette.background.default },
  entity: { paddingLeft: theme.spacing(3) },
  statefulSet: { paddingLeft: theme.spacing(6) },
  muted: { color: theme.palette.text.secondary },
}));

/** Props of {@link FleetTable}. */
export interface FleetTableProps {
  /** The section's accessible name, e.g. "Reclaimable storage by owner". */
  label: string;
  groups: Array<{
    key: string;
    title: ReactNode;
    totals: OrphanTotals;
    firstSeenOrphanedAt?: string;
    entities: Array<{
      entityRef: string;
      title: ReactNode;
      totals: OrphanTotals;
      firstSeenOrphanedAt?: string;
      statefulSets: FleetStatefulSet[];
    }>;
    /** StatefulSets right under the group (the unowned section). */
    statefulSets?: FleetStatefulSet[];
  }>;
  sort: FleetSort;
  onSort: (key: FleetSortKey) => void;
  /** Set when the backend priced the answer. */
  currency?: string;
}

function Storage({ totals }: { totals: OrphanTotals }) {
  const classes = useStyles();
  return (
    <>
      {formatBytes(totals.reclaimableBytes)}
      {totals.retainedBytes > 0 && (
        <Typography variant="caption" component="div" className={classes.muted}>
          + {formatBytes(totals.retainedBytes)} on Retain volumes
        </Typography>
      )}
    </>
  );
}

function Cost({
  totals,
  currency,
}: {
  totals: OrphanTotals;
  currency: string;
}) {
  const classes = useStyles();
  if (totals.reclaimableMonthlyCost === undefined) return null;
  return (
    <>
      {formatMonthly(totals.reclaimableMonthlyCost, currency)}
      {(totals.retainedMonthlyCost ?? 0) > 0 && (
        <Typography variant="caption" component="div" className={classes.muted}>
          + {formatMonthly(totals.retainedMonthlyCost!, currency)} that Retain
          volumes keep costing after a prune
        </Typography>
      )}
    </>
  );
}

function Row(props: {
  name: ReactNode;
  nameClass: string;
  rowClass?: string;
  totals: OrphanTotals;
  firstSeenOrphanedAt?: string;
  currency?: string;
  strong?: boolean;
}) {
  const { totals, currency } = props;
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
      <TableCell align="right">{text(totals.orphans)}</TableCell>
      <TableCell>{text(<Storage totals={totals} />)}</TableCell>
      {currency && (
        <TableCell>
          {text(<Cost totals={totals} currency={currency} />)}
        </TableCell>
      )}
      <TableCell>
        {text(seenOrphanedSince(props.firstSeenOrphanedAt) ?? '—')}
      </TableCell>
    </TableRow>
  );
}

const statefulSetName = (s: FleetStatefulSet) =>
  `${s.cluster} · ${s.namespace}/${s.name}`;

/**
 * Owners, each with its entities and their StatefulSets: orphans, storage,
 * monthly cost and first sighting per row, sortable by the last three.
 */
export function FleetTable(props: FleetTableProps) {
  const { groups, sort, onSort, currency } = props;
  const classes = useStyles();
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
            firstSeenOrphanedAt={group.firstSeenOrphanedAt}
            currency={currency}
            strong
          />,
          ...group.entities.flatMap(entity => [
            <Row
              key={entity.entityRef}
              name={entity.title}
              nameClass={classes.entity}
              totals={entity.totals}
              firstSeenOrphanedAt={entity.firstSeenOrphanedAt}
              currency={currency}
            />,
            ...entity.statefulSets.map(s => (
              <Row
                key={`${entity.entityRef} ${statefulSetName(s)}`}
                name={
                  <span className={classes.muted}>{statefulSetName(s)}</span>
                }
                nameClass={classes.statefulSet}
                totals={s}
                firstSeenOrphanedAt={s.firstSeenOrphanedAt}
                currency={currency}
              />
            )),
          ]),
          ...(group.statefulSets ?? []).map(s => (
            <Row
              key={`${group.key} ${statefulSetName(s)}`}
              name={statefulSetName(s)}
              nameClass={classes.entity}
              totals={s}
              firstSeenOrphanedAt={s.firstSeenOrphanedAt}
              currency={currency}
            />
          )),
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
