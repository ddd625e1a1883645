import {
  Box,
  Button,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Tooltip,
  Typography,
} from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import { Progress } from '@backstage/core-components';
import {
  KeptSnapshot,
  SnapshotsResponse,
  formatBytes,
} from 'backstage-plugin-pvc-pruner-common';
import { useSnapshotActions } from '../../hooks/SnapshotActionsContext';
import { describeError } from '../../utils/errors';
import { formatAge, formatTime, plural } from '../../utils/format';
import { MonthlyCost, PricingProvider } from '../MonthlyCost';

/** Props of {@link SnapshotList}. */
export interface SnapshotListProps {
  value?: SnapshotsResponse;
  error?: Error;
  /** What the last restore said to do next, shown above the list. */
  restoredMessage?: string;
}

function status(snapshot: KeptSnapshot): string {
  if (snapshot.error) return `Error: ${snapshot.error}`;
  return snapshot.readyToUse ? 'Ready' : 'Not ready yet';
}

function expiry(snapshot: KeptSnapshot): string {
  if (snapshot.keepUntilUnreadable)
    return `kept: its keep-until annotation "${snapshot.keepUntilUnreadable}" is not a date`;
  const when = formatTime(snapshot.expiresAt);
  return snapshot.keepUntil ? `${when} (kept by hand)` : when;
}

function SnapshotRow(props: {
  cluster: string;
  statefulSet: string;
  snapshot: KeptSnapshot;
}) {
  const { cluster, statefulSet, snapshot } = props;
  const { restore, keep } = useSnapshotActions();
  const entry = { cluster, statefulSet, snapshot };
  const restoreButton = (
    <Button
      size="small"
      variant="outlined"
      color="primary"
      disabled={!restore || !snapshot.restorable}
      onClick={() => restore?.(entry)}
      aria-label={`Restore ${snapshot.claimName} from ${snapshot.name}`}
    >
      Restore…
    </Button>
  );
  return (
    <TableRow>
      <TableCell>
        <Typography variant="body2">{snapshot.claimName}</Typography>
        <Typography variant="caption" color="textSecondary">
          {snapshot.name}
        </Typography>
      </TableCell>
      <TableCell>
        {snapshot.restoreBytes !== undefined
          ? formatBytes(snapshot.restoreBytes)
          : '—'}
        <MonthlyCost prefix=" · " amount={snapshot.monthlyCost} />
      </TableCell>
      <TableCell title={formatTime(snapshot.createdAt)}>
        {formatAge(snapshot.createdAt)}
      </TableCell>
      <TableCell>{expiry(snapshot)}</TableCell>
      <TableCell>{status(snapshot)}</TableCell>
      <TableCell>
        <Box display="flex" gridGap={8}>
          {snapshot.restorable ? (
            restoreButton
          ) : (
            <Tooltip title={snapshot.notRestorable ?? 'Not restorable now'}>
              <span>{restoreButton}</span>
            </Tooltip>
          )}
          <Button
            size="small"
            disabled={!keep}
            onClick={() => keep?.(entry)}
            aria-label={`Keep ${snapshot.name} longer`}
          >
            Keep longer…
          </Button>
        </Box>
      </TableCell>
    </TableRow>
  );
}

/**
 * The snapshots pvc-pruner kept of the entity's StatefulSets, as the
 * clusters have them: per StatefulSet, each with the claim it came from, its
 * size, age and expiry, and Restore and Keep longer.
 */
export function SnapshotList(props: SnapshotListProps) {
  const { value, error, restoredMessage } = props;
  const sections = (value?.clusters ?? []).flatMap(c =>
    c.ok ? c.statefulSets.map(s => ({ cluster: c.cluster, ...s })) : [],
  );
  const failed = (value?.clusters ?? []).flatMap(c => (c.ok ? [] : [c]));
  return (
    <Box component="section" aria-label="Kept snapshots" mt={2}>
      <Typography variant="h5" component="h3" gutterBottom>
        Snapshots
      </Typography>
      {restoredMessage && (
        <Alert severity="success" role="status">
          {restoredMessage}
        </Alert>
      )}
      {error && (
        <Alert severity="error">
          Could not read the kept snapshots: {describeError(error)}
        </Alert>
      )}
      {!value && !error && <Progress />}
      {failed.map(c => (
        <Alert key={c.cluster} severity="warning">
          Could not read the snapshots in cluster {c.cluster}: {c.error.message}
        </Alert>
      ))}
      {value && (
        <PricingProvider pricing={value.pricing}>
          <Typography variant="body2" paragraph>
            {value.totals.snapshots === 0
              ? 'No snapshots kept: a prune with "Keep a snapshot" keeps one of each claim it deletes, restorable here until it expires.'
              : `${plural(
                  value.totals.snapshots,
                  'snapshot',
                )} kept · ${formatBytes(value.totals.bytes)}`}
            {value.totals.snapshots > 0 && (
              <MonthlyCost prefix=" · " amount={value.totals.monthlyCost} />
            )}
          </Typography>
          {sections.map(s => (
            <Box
              key={`${s.cluster}/${s.namespace}/${s.name}`}
              component="section"
              aria-label={`Snapshots of ${s.namespace}/${s.name}`}
              mb={2}
            >
              <Typography variant="subtitle1" component="h4">
                {s.namespace}/{s.name} in {s.cluster}
              </Typography>
              <Table size="small">
                <TableHead>
                  <TableRow>
                    <TableCell>Claim</TableCell>
                    <TableCell>Size</TableCell>
                    <TableCell>Age</TableCell>
                    <TableCell>Expires</TableCell>
                    <TableCell>Status</TableCell>
                    <TableCell />
                  </TableRow>
                </TableHead>
                <TableBody>
                  {s.snapshots.map(snapshot => (
                    <SnapshotRow
                      key={snapshot.uid}
                      cluster={s.cluster}
                      statefulSet={s.name}
                      snapshot={snapshot}
                    />
                  ))}
                </TableBody>
              </Table>
            </Box>
          ))}
        </PricingProvider>
      )}
    </Box>
  );
}
