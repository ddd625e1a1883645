import {
  Box,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Typography,
} from '@material-ui/core';
import { EntityLinks } from '../EntityLinks';
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

function Rows(props: {
  entityRef?: string;
  leftBehind: FleetLeftBehind;
  currency?: string;
}) {
  const { entityRef, leftBehind, currency } = props;
  return (
    <>
      {leftBehind.statefulSets.map(s => (
        <TableRow
          key={`${entityRef}/${s.cluster}/${s.namespace}/${s.name}/${s.evidence}`}
        >
          <TableCell>
            {entityRef ? <EntityLinks entityRefs={[entityRef]} /> : 'Unowned'}
          </TableCell>
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
 * The fleet page's claims of deleted StatefulSets: a kind of their own,
 * beside the orphans of live StatefulSets, with their totals, per entity
 * (pruned from its card) and, for holders of the unowned read, those no
 * entity claims.
 */
export function LeftBehindFleet(props: LeftBehindFleetProps) {
  const { fleet, currency } = props;
  const total = fleet.totals.leftBehind;
  const unowned = fleet.unowned?.leftBehind;
  if (!total && !unowned) return null;
  return (
    <Box mt={4} component="section" aria-label="Claims of deleted StatefulSets">
      <Typography variant="h6" component="h3">
        Claims of deleted StatefulSets
      </Typography>
      <Typography variant="body2" color="textSecondary" paragraph>
        Claims that StatefulSets left behind when they were deleted, not in the
        totals above. Prune them from their entity's card.
        {total && ` In all: ${leftBehindSummary(total, currency)}.`}
      </Typography>
      {fleet.owners.some(o => o.leftBehind) && (
        <Typography variant="body2" paragraph>
          {fleet.owners
            .filter(o => o.leftBehind)
            .map(
              o =>
                `${o.owner ?? 'No owner'}: ${leftBehindSummary(
                  o.leftBehind!,
                  currency,
                )}`,
            )
            .join('; ')}
        </Typography>
      )}
      <Table size="small" aria-label="Claims of deleted StatefulSets">
        <TableHead>
          <TableRow>
            <TableCell>Entity</TableCell>
            <TableCell>Deleted StatefulSet</TableCell>
            <TableCell>Known by</TableCell>
            <TableCell align="right">Claims</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {fleet.items
            .filter(e => e.leftBehind)
            .map(e => (
              <Rows
                key={e.entityRef}
                entityRef={e.entityRef}
                leftBehind={e.leftBehind!}
                currency={currency}
              />
            ))}
          {unowned && <Rows leftBehind={unowned} currency={currency} />}
        </TableBody>
      </Table>
    </Box>
  );
}
