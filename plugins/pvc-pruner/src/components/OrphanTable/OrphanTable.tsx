import { ReactNode, useMemo } from 'react';
import { Box, Typography, makeStyles } from '@material-ui/core';
import WarningIcon from '@material-ui/icons/Warning';
import { Table, TableColumn } from '@backstage/core-components';
import { OrphanedPvc } from 'backstage-plugin-pvc-pruner-common';
import { claimSize, formatAge, formatTime, podName } from '../../utils/format';
import { seenOrphanedSince } from '../../utils/sightings';
import { MonthlyCost } from '../MonthlyCost';
import { RenderWhenVisible } from '../RenderWhenVisible';

/** Rows longer than this are paged. */
export const ORPHAN_PAGE_SIZE = 10;

const useStyles = makeStyles(theme => ({
  retained: {
    color: theme.palette.warning.dark,
    display: 'flex',
    alignItems: 'flex-start',
    gap: theme.spacing(0.5),
  },
  muted: { color: theme.palette.text.secondary },
}));

type Row = OrphanedPvc & { id: string };

/** A fresh style each time: the Table writes into the style objects it is given. */
const nowrap = () => ({ whiteSpace: 'nowrap' as const });

/** Props of {@link OrphanTable}. */
export interface OrphanTableProps {
  statefulSet: string;
  orphans: OrphanedPvc[];
  /** Adds an Automatic pruning column with this cell (an opted-in entity's card). */
  autoPrune?: (pvc: OrphanedPvc) => ReactNode;
}

function VolumeCell({ pvc }: { pvc: OrphanedPvc }) {
  const classes = useStyles();
  if (!pvc.volume) return <span className={classes.muted}>not bound</span>;
  const { name, reclaimPolicy, phase, retained } = pvc.volume;
  return (
    <Box>
      <Typography variant="body2">{name}</Typography>
      <Typography variant="caption" className={classes.muted}>
        {reclaimPolicy ?? 'unknown policy'}
        {phase ? ` · ${phase}` : ''}
      </Typography>
      {retained && (
        <Typography
          variant="caption"
          component="div"
          className={classes.retained}
        >
          <WarningIcon fontSize="small" aria-hidden />
          <span>Retain: the disk survives pruning and is still billed</span>
        </Typography>
      )}
    </Box>
  );
}

function HazardCell({
  pvc,
  statefulSet,
}: {
  pvc: OrphanedPvc;
  statefulSet: string;
}) {
  return (
    <Typography variant="body2">
      At ≥ {pvc.reattachesAtReplicas} replicas, reattached to pod{' '}
      {podName(statefulSet, pvc.ordinal)} with its old data
    </Typography>
  );
}

/**
 * The orphaned claims of one StatefulSet: size, storage, the volume's
 * reclaim policy (a `Retain` volume is flagged: it is still billed after
 * pruning) and the scale at which the controller would reattach it.
 * Paged past {@link ORPHAN_PAGE_SIZE} rows.
 */
export function OrphanTable(props: OrphanTableProps) {
  const { statefulSet, orphans, autoPrune } = props;
  const classes = useStyles();
  // material-table writes into its rows; give it copies.
  const rows = useMemo<Row[]>(
    () => orphans.map(o => ({ ...o, id: o.uid })),
    [orphans],
  );
  const columns = useMemo<TableColumn<Row>[]>(
    () => [
      {
        title: 'Claim',
        field: 'name',
        highlight: true,
        cellStyle: nowrap(),
        render: pvc => <Typography variant="body2">{pvc.name}</Typography>,
      },
      {
        title: 'Ordinal',
        field: 'ordinal',
        type: 'numeric',
        headerStyle: nowrap(),
        render: pvc => <Typography variant="body2">{pvc.ordinal}</Typography>,
      },
      {
        title: 'Capacity · StorageClass',
        field: 'capacityBytes',
        customSort: (a, b) =>
          (a.capacityBytes ?? a.requestedBytes) -
          (b.capacityBytes ?? b.requestedBytes),
        render: pvc => (
          <Box>
            <Typography variant="body2" style={nowrap()}>
              {claimSize(pvc)}
            </Typography>
            {pvc.monthlyCost !== undefined && (
              <Typography variant="caption" component="div" style={nowrap()}>
                <MonthlyCost amount={pvc.monthlyCost} />
              </Typography>
            )}
            <Typography variant="caption" className={classes.muted}>
              {pvc.storageClassName ?? 'no StorageClass'}
            </Typography>
          </Box>
        ),
      },
      {
        title: 'Volume and reclaim policy',
        field: 'volume.name',
        cellStyle: { minWidth: 200, wordBreak: 'break-word' },
        render: pvc => <VolumeCell pvc={pvc} />,
      },
      {
        title: 'Phase · age',
        field: 'createdAt',
        headerStyle: nowrap(),
        cellStyle: nowrap(),
        render: pvc => (
          <Typography
            variant="body2"
            component="span"
            title={formatTime(pvc.createdAt)}
          >
            {pvc.phase ?? 'Unknown'} · {formatAge(pvc.createdAt)}
            {pvc.firstSeenOrphanedAt && (
              <Typography
                variant="caption"
                component="div"
                className={classes.muted}
                title={formatTime(pvc.firstSeenOrphanedAt)}
              >
                {seenOrphanedSince(pvc.firstSeenOrphanedAt)}
              </Typography>
            )}
          </Typography>
        ),
      },
      {
        title: 'Reattach hazard',
        field: 'reattachesAtReplicas',
        render: pvc => <HazardCell pvc={pvc} statefulSet={statefulSet} />,
      },
      ...(autoPrune
        ? [
            {
              title: 'Automatic pruning',
              field: 'eligibleAt',
              render: autoPrune,
            } as TableColumn<Row>,
          ]
        : []),
    ],
    [classes, statefulSet, autoPrune],
  );
  const paged = rows.length > ORPHAN_PAGE_SIZE;
  const shownRows = Math.min(rows.length, ORPHAN_PAGE_SIZE);
  return (
    <RenderWhenVisible placeholderHeight={shownRows * 80 + (paged ? 170 : 60)}>
      <Table<Row>
        columns={columns}
        data={rows}
        options={{
          paging: paged,
          pageSize: ORPHAN_PAGE_SIZE,
          pageSizeOptions: [ORPHAN_PAGE_SIZE, 25, 50],
          search: paged,
          toolbar: paged,
          padding: 'dense',
          draggable: false,
        }}
        title={paged ? `${rows.length} orphaned claims` : undefined}
      />
    </RenderWhenVisible>
  );
}
