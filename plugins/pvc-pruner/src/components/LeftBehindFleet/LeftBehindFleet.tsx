import { Fragment, useState } from 'react';
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
import { UnownedPrune, UnownedPruneButton } from '../UnownedPrune';

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

type Row = FleetLeftBehind['statefulSets'][number];

const keyOf = (s: Row) =>
  JSON.stringify([s.cluster, s.namespace, s.name, s.evidence]);

function Rows(props: {
  leftBehind: FleetLeftBehind;
  currency?: string;
  /** Whether the user may prune them here (pvc-pruner.unowned.prune). */
  prunable?: boolean;
  onPruned?: () => void;
}) {
  const { leftBehind, currency, prunable, onPruned } = props;
  const [pruning, setPruning] = useState<string[]>([]);
  return (
    <>
      {leftBehind.statefulSets.map(s => (
        <Fragment key={keyOf(s)}>
          <TableRow>
            <TableCell>
              {s.cluster} / {s.namespace} / {s.name}
            </TableCell>
            <TableCell>
              {s.evidence === 'lineage'
                ? 'recorded (lineage)'
                : 'name and labels only'}
            </TableCell>
            <TableCell align="right">
              {leftBehindSummary(s, currency)}
            </TableCell>
            {prunable && (
              <TableCell align="right">
                <UnownedPruneButton
                  open={pruning.includes(keyOf(s))}
                  onOpen={() => setPruning(open => [...open, keyOf(s)])}
                  label={`Prune the claims deleted StatefulSet ${s.namespace}/${s.name} left in ${s.cluster}`}
                />
              </TableCell>
            )}
          </TableRow>
          {pruning.includes(keyOf(s)) && (
            <TableRow>
              <TableCell colSpan={4}>
                <UnownedPrune
                  statefulSet={s}
                  onClose={pruned => {
                    setPruning(open => open.filter(k => k !== keyOf(s)));
                    if (pruned) onPruned?.();
                  }}
                />
              </TableCell>
            </TableRow>
          )}
        </Fragment>
      ))}
    </>
  );
}

/** Props of {@link LeftBehindFleet}. */
export interface LeftBehindFleetProps {
  fleet: FleetResponse;
  currency?: string;
  /** Called once a prune of unowned claims finished here, to load the fleet again. */
  onPruned?: () => void;
}

/**
 * The fleet page's claims of deleted StatefulSets that no catalog entity
 * claims, recorded or by labels, for holders of the unowned read, pruned
 * here by holders of the unowned prune. Those of an entity are in its
 * owner's rows of the main table.
 */
export function LeftBehindFleet(props: LeftBehindFleetProps) {
  const { fleet, currency } = props;
  const unowned = fleet.unowned?.leftBehind;
  if (!unowned || unowned.statefulSets.length === 0) return null;
  const prunable = fleet.unowned?.prunable;
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
        {leftBehindSummary(unowned.totals, currency)}.{' '}
        {prunable
          ? 'You hold pvc-pruner.unowned.prune, so you may prune them here.'
          : "Pruning them here needs pvc-pruner.unowned.prune, which you don't hold."}
      </Typography>
      <Table size="small" aria-label="Unowned claims of deleted StatefulSets">
        <TableHead>
          <TableRow>
            <TableCell>Deleted StatefulSet</TableCell>
            <TableCell>Known by</TableCell>
            <TableCell align="right">Claims</TableCell>
            {prunable && <TableCell align="right">Prune</TableCell>}
          </TableRow>
        </TableHead>
        <TableBody>
          <Rows
            leftBehind={unowned}
            currency={currency}
            prunable={prunable}
            onPruned={props.onPruned}
          />
        </TableBody>
      </Table>
    </Box>
  );
}
