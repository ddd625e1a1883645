import { useMemo, useState } from 'react';
import { Box, Button, Typography } from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import GetAppIcon from '@material-ui/icons/GetApp';
import {
  EmptyState,
  InfoCard,
  Progress,
  ResponseErrorPanel,
} from '@backstage/core-components';
import {
  FleetResponse,
  FleetStatefulSet,
  OrphanTotals,
  SnapshotTotals,
  formatBytes,
} from 'backstage-plugin-pvc-pruner-common';
import { statefulSetKey } from '../../hooks/useActiveJobs';
import { useEntityKubernetesPath } from '../../hooks/useEntityKubernetesPath';
import { FleetFilters as Filters, useFleet } from '../../hooks/useFleet';
import {
  FleetSort,
  FleetSortKey,
  fleetCsv,
  fleetGroups,
  sortedUnowned,
} from '../../utils/fleetView';
import { plural } from '../../utils/format';
import { formatMonthly } from '../../utils/money';
import { FleetAutoPruneLine } from '../FleetAutoPruneLine';
import { FleetFilters } from '../FleetFilters';
import {
  EntityLink,
  FleetStatefulSetAction,
  FleetTable,
  ownerTitle,
} from '../FleetTable';
import { UnownedPrune, UnownedPruneButton } from '../UnownedPrune';
import { LeftBehindFleet, leftBehindSummary } from '../LeftBehindFleet';
import { ReleasedVolumesSection } from '../ReleasedVolumesSection';

function TotalsLine(props: {
  totals: OrphanTotals;
  currency?: string;
  what: string;
}) {
  const { totals, currency } = props;
  return (
    <Typography variant="body1">
      <strong>{props.what}</strong> · {plural(totals.orphans, 'orphaned claim')}{' '}
      · <strong>{formatBytes(totals.reclaimableBytes)}</strong> reclaimable
      {currency && totals.reclaimableMonthlyCost !== undefined && (
        <>
          {' '}
          ·{' '}
          <strong>
            {formatMonthly(totals.reclaimableMonthlyCost, currency)}
          </strong>
        </>
      )}
      {totals.retainedBytes > 0 && (
        <>
          {' '}
          · plus {formatBytes(totals.retainedBytes)} on Retain volumes
          {currency &&
            totals.retainedMonthlyCost !== undefined &&
            ` (${formatMonthly(totals.retainedMonthlyCost, currency)})`}
          : a prune leaves their disks billed, under Released volumes below,
          until you reclaim them there
        </>
      )}
    </Typography>
  );
}

/** What the undo window keeps, apart from the claims: the snapshots' size and cost. */
function SnapshotTotalsLine(props: {
  totals?: SnapshotTotals;
  currency?: string;
}) {
  const { totals, currency } = props;
  if (!totals || totals.snapshots === 0) return null;
  return (
    <Typography variant="body2">
      Kept snapshots (the undo window of past prunes):{' '}
      {plural(totals.snapshots, 'snapshot')} · {formatBytes(totals.bytes)}
      {currency &&
        totals.monthlyCost !== undefined &&
        ` · ${formatMonthly(totals.monthlyCost, currency)}`}
      , billed apart from the claims until they expire
    </Typography>
  );
}

/** Filter choices from the unfiltered answer, so a choice never hides the others. */
function optionsOf(fleet: FleetResponse | undefined) {
  const namespaces = new Set<string>();
  for (const e of fleet?.items ?? [])
    for (const s of e.statefulSets) namespaces.add(s.namespace);
  for (const s of fleet?.unowned?.statefulSets ?? [])
    namespaces.add(s.namespace);
  return {
    clusters: (fleet?.clusters ?? []).map(c => c.cluster),
    namespaces: [...namespaces].sort(),
    owners: (fleet?.owners ?? []).flatMap(o => (o.owner ? [o.owner] : [])),
  };
}

const keyOf = (s: FleetStatefulSet) =>
  statefulSetKey({
    cluster: s.cluster,
    namespace: s.namespace,
    statefulSet: s.name,
  });

/** Whether some StatefulSet is listed under several entities. */
const anyShared = (fleet: FleetResponse) =>
  fleet.items.some(e => e.statefulSets.some(s => s.sharedWith?.length));

/**
 * The fleet view: what every entity the user may read could reclaim, in
 * GiB and (with pricing) money, grouped by owner, filterable, sortable and
 * downloadable as the CSV of exactly what it shows.
 */
export function FleetView() {
  const [filters, setFilters] = useState<Filters>({});
  const [sortChoice, setSort] = useState<FleetSort | undefined>();
  const filtered = Boolean(
    filters.cluster || filters.namespace || filters.owner,
  );
  const all = useFleet({});
  const some = useFleet(filters, filtered);
  const state = filtered ? some : all;
  const fleet = state.value;
  const currency = fleet?.pricing?.currency;
  const sort: FleetSort = useMemo(
    () =>
      sortChoice ?? { key: currency ? 'cost' : 'storage', descending: true },
    [sortChoice, currency],
  );
  const entityPath = useEntityKubernetesPath();
  // The unowned StatefulSets whose prune panel is open, by statefulSetKey.
  const [pruning, setPruning] = useState<string[]>([]);
  const { retry } = state;
  const pruneAction: FleetStatefulSetAction | undefined = useMemo(
    () =>
      fleet?.unowned?.prunable
        ? {
            title: 'Prune',
            render: s => (
              <UnownedPruneButton
                open={pruning.includes(keyOf(s))}
                onOpen={() => setPruning(open => [...open, keyOf(s)])}
                label={`Prune unowned ${s.namespace}/${s.name} in ${s.cluster}`}
              />
            ),
            detail: s =>
              pruning.includes(keyOf(s)) ? (
                <UnownedPrune
                  statefulSet={s}
                  onClose={pruned => {
                    setPruning(open => open.filter(k => k !== keyOf(s)));
                    if (pruned) retry();
                  }}
                />
              ) : undefined,
          }
        : undefined,
    [fleet?.unowned?.prunable, pruning, retry],
  );
  const options = useMemo(() => optionsOf(all.value), [all.value]);

  const groups = useMemo(
    () => (fleet ? fleetGroups(fleet, sort) : []),
    [fleet, sort],
  );
  const unowned = useMemo(
    () => (fleet?.unowned ? sortedUnowned(fleet, sort) : undefined),
    [fleet, sort],
  );
  const csvHref = useMemo(
    () =>
      `data:text/csv;charset=utf-8,${encodeURIComponent(
        fleetCsv(
          groups,
          unowned,
          currency,
          fleet?.unowned?.leftBehind?.statefulSets,
        ),
      )}`,
    [groups, unowned, currency, fleet?.unowned?.leftBehind],
  );
  const onSort = (key: FleetSortKey) =>
    setSort(
      sort.key === key
        ? { key, descending: !sort.descending }
        : { key, descending: true },
    );

  let body;
  if (state.error) {
    body = (
      <ResponseErrorPanel
        error={state.error}
        title="Could not load the fleet"
      />
    );
  } else if (!fleet) {
    body = <Progress />;
  } else {
    body = (
      <>
        {fleet.clusters
          .filter(c => !c.ok)
          .map(c => (
            <Alert key={c.cluster} severity="error" style={{ marginBottom: 8 }}>
              Cluster {c.cluster} did not answer, so its claims are in no row
              and no total: {'error' in c ? c.error.message : ''}
            </Alert>
          ))}
        <Box mb={2}>
          <TotalsLine
            what={`${fleet.totals.entities} ${
              fleet.totals.entities === 1 ? 'entity' : 'entities'
            } with orphans, of ${fleet.entitiesScanned} you may read`}
            totals={fleet.totals}
            currency={currency}
          />
          {fleet.totals.leftBehind && (
            <Typography variant="body1">
              <strong>Claims of deleted StatefulSets</strong> ·{' '}
              {leftBehindSummary(fleet.totals.leftBehind, currency)} · apart
              from the orphans above, marked in their owners' rows; prune them
              from their entity's card
            </Typography>
          )}
          <SnapshotTotalsLine
            totals={fleet.totals.snapshots}
            currency={currency}
          />
          <FleetAutoPruneLine autoPrune={fleet.autoPrune} />
          {fleet.unowned && (
            <TotalsLine
              what="Unowned"
              totals={fleet.unowned.totals}
              currency={currency}
            />
          )}
          {anyShared(fleet) && (
            <Typography variant="body2">
              A StatefulSet that several entities claim is listed under each of
              them, and counted once in every owner's total and the total above.
            </Typography>
          )}
          {(fleet.pricing?.unpricedStorageClasses.length ?? 0) > 0 && (
            <Typography variant="body2">
              No price for StorageClass{' '}
              {fleet.pricing!.unpricedStorageClasses.join(', ')} in
              pvcPruner.pricing: those claims are in no cost shown.
            </Typography>
          )}
          {!currency && (
            <Typography variant="body2" color="textSecondary">
              Sizes only: set pvcPruner.pricing to see what they cost.
            </Typography>
          )}
        </Box>
        <Box
          display="flex"
          alignItems="flex-start"
          justifyContent="space-between"
          flexWrap="wrap"
        >
          <FleetFilters
            filters={filters}
            options={options}
            onChange={setFilters}
          />
          <Button
            variant="outlined"
            startIcon={<GetAppIcon />}
            href={csvHref}
            download="pvc-pruner-fleet.csv"
          >
            Download CSV
          </Button>
        </Box>
        {groups.length === 0 ? (
          <EmptyState
            missing="data"
            title="Nothing to reclaim"
            description="No entity you may read has StatefulSets that left claims behind, in the clusters that answered."
          />
        ) : (
          <FleetTable
            label="Reclaimable storage by owner"
            currency={currency}
            sort={sort}
            onSort={onSort}
            groups={groups.map(g => ({
              key: g.owner.owner ?? '(no owner)',
              title: ownerTitle(g.owner.owner),
              totals: g.owner.totals,
              leftBehind: g.owner.leftBehind,
              firstSeenOrphanedAt: g.owner.firstSeenOrphanedAt,
              entities: g.entities.map(e => ({
                ...e,
                title: (
                  <EntityLink
                    entityRef={e.entityRef}
                    title={e.title}
                    to={entityPath(e.entityRef)}
                  />
                ),
              })),
            }))}
          />
        )}
        <LeftBehindFleet fleet={fleet} currency={currency} onPruned={retry} />
        {unowned && (
          <Box mt={4} component="section" aria-label="Unowned">
            <Typography variant="h6" component="h3">
              Unowned
            </Typography>
            <Typography variant="body2" color="textSecondary" paragraph>
              StatefulSets with orphans that no catalog entity maps to (by its
              Kubernetes annotations). Shown to holders of
              pvc-pruner.fleet.unowned.read.{' '}
              {fleet.unowned!.prunable
                ? 'You hold pvc-pruner.unowned.prune, so you may prune them here.'
                : "Pruning them here needs pvc-pruner.unowned.prune, which you don't hold."}
            </Typography>
            {unowned.length === 0 ? (
              <Typography variant="body2">None.</Typography>
            ) : (
              <FleetTable
                label="Unowned StatefulSets"
                currency={currency}
                sort={sort}
                onSort={onSort}
                statefulSetAction={pruneAction}
                groups={[
                  {
                    key: 'unowned',
                    title: 'Unowned',
                    totals: fleet.unowned!.totals,
                    firstSeenOrphanedAt: fleet.unowned!.firstSeenOrphanedAt,
                    entities: [],
                    statefulSets: unowned,
                  },
                ]}
              />
            )}
          </Box>
        )}
        <ReleasedVolumesSection currency={currency} entityPath={entityPath} />
      </>
    );
  }
  return (
    <InfoCard
      title="Reclaimable storage"
      subheader="Claims that scaled-down StatefulSets left behind, across every entity you may read"
    >
      {state.loading && fleet && <Progress />}
      {body}
    </InfoCard>
  );
}
