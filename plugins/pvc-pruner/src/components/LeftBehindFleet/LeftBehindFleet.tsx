import {
  Box,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Typography,
} from '@material-ui/core';
import {
  FleetLeftBehind,
  FleetResponse,
  OrphanTotals,
  formatBytes,
} from 'backstage-plugin-pvc-pruner-common';
import { plural } from '../../utils/format';
import { formatMonthly } from '../../utils/money';

/** "3 claims · 60 GiB · $10.20 a month" of some claims of deleted StatefulSets. */
export function leftBehindSummary(
  totals: OrphanTotals,
  currency?: string,
): string {
  const bytes = totals.reclaimableBytes + totals.retainedBytes;
  const cost =
    (totals.reclaimableMonthlyCost ?? 0) + (totals.retainedMonthlyCost ?? 0);
  return `${plural(totals.orphans, 'claim')} · ${formatBytes(bytes)}${
    currency && totals.reclaimableMonthlyCost !== undefined
      ? ` · ${formatMonthly(cost, currency)}`
      : ''
  }`;
}

function Rows(props: { leftBehind: FleetLeftBehind; currency?: string }) {
  const { leftBehind, currency } = props;
  return (
    <>
      {leftBehind.statefulSets.map(s => (
        <TableRow key={`${s.cluster}/${s.namespace}/${s.name}/${s.evidence}`}>
          <TableCell>
            {s.cluster} / {s.namespace} / {s.name}
          </TableCell>
          <TableCell>
            {s.evidence === 'lineage'
              ? 'recorded (lineage)'
              : 'name and labels only'}
          </TableCell>
          <TableCell align="right">{leftBehindSummary(s, currency)}</TableCell>
        </TableRow>
      ))}
    </>
  );
}

/** Props of {@link LeftBehindFleet}. */
export interface LeftBehindFleetProps {
  fleet: FleetResponse;
  currency?: string;
}

/**
 * The fleet page's claims of deleted StatefulSets that no catalog entity
 * claims, recorded or by labels, for holders of the unowned read. Those of
 * an entity are in its owner's rows of the main table.
 */
export function LeftBehindFleet(props: LeftBehindFleetProps) {
  const { fleet, currency } = props;
  const unowned = fleet.unowned?.leftBehind;
  if (!unowned || unowned.statefulSets.length === 0) return null;
  return (
    <Box
      mt={4}
      component="section"
      aria-label="Unowned claims of deleted StatefulSets"
    >
      <Typography variant="h6" component="h3">
        Unowned claims of deleted StatefulSets
      </Typography>
      <Typography variant="body2" color="textSecondary" paragraph>
        Claims that deleted StatefulSets left behind, which no catalog entity
        claims, recorded or by their labels:{' '}
        {leftBehindSummary(unowned.totals, currency)}.
      </Typography>
      <Table size="small" aria-label="Unowned claims of deleted StatefulSets">
        <TableHead>
          <TableRow>
            <TableCell>Deleted StatefulSet</TableCell>
            <TableCell>Known by</TableCell>
            <TableCell align="right">Claims</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          <Rows leftBehind={unowned} currency={currency} />
        </TableBody>
      </Table>
    </Box>
  );
}
