import { useRef } from 'react';
import { Box, Typography, makeStyles } from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import {
  LeftBehindGroup,
  LeftBehindResponse,
} from 'backstage-plugin-pvc-pruner-common';
import { useActiveJobsContext } from '../../hooks/ActiveJobsContext';
import { statefulSetKey } from '../../hooks/useActiveJobs';
import { describeError } from '../../utils/errors';
import { EntityLinks } from '../EntityLinks';
import { StatefulSetSection } from '../StatefulSetSection';
import { WithheldNotice } from '../WithheldNotice';

const useStyles = makeStyles(theme => ({
  header: { marginBottom: theme.spacing(1) },
  code: { fontFamily: 'monospace' },
}));

/** "3 Dec" (and the year when it is not this one). */
export function shortDate(iso: string, now = new Date()): string {
  const date = new Date(iso);
  return date.toLocaleDateString('en-GB', {
    day: 'numeric',
    month: 'short',
    ...(date.getFullYear() !== now.getFullYear() ? { year: 'numeric' } : {}),
  });
}

/** What says whose the claims were: their lineage, or only their name and labels. */
export function LeftBehindGroupHeader(props: {
  group: LeftBehindGroup;
  /** The entity whose card shows it; none on the fleet page's Unowned. */
  entityRef?: string;
}) {
  const { group, entityRef } = props;
  const classes = useStyles();
  const name = group.statefulSet.name;
  const gone = group.claimantsNotInCatalog ?? [];
  // Gone, re-created, or recorded before uids: stated once, never linked as a claimant.
  const unverified = [
    ...new Set([...gone, ...(group.unverifiedClaimants ?? [])]),
  ].sort();
  const alsoBy = group.claimants.filter(
    ref => ref !== entityRef && !unverified.includes(ref),
  );
  const others = alsoBy.length > 0 && (
    <>
      {' '}
      Also claimed by <EntityLinks entityRefs={alsoBy} />.
    </>
  );
  if (group.evidence === 'lineage')
    return (
      <Box className={classes.header}>
        <Typography variant="h6" component="h4">
          Left by StatefulSet {name}, deleted
          {group.lastSeenAt && `; last seen ${shortDate(group.lastSeenAt)}`}
        </Typography>
        <Typography variant="body2" color="textSecondary">
          Namespace {group.namespace}. pvc-pruner recorded these claims as{' '}
          {name}'s while it existed; no StatefulSet of that name exists now, and
          no pod uses them.{others}
        </Typography>
        {unverified.length > 0 && (
          <Typography variant="body2" color="error">
            Recorded as claimed by{' '}
            {unverified.map((ref, i) => (
              <span key={ref}>
                {i > 0 && '; '}
                <span className={classes.code}>{ref}</span> (
                {gone.includes(ref)
                  ? 'no longer in the catalog: removed, renamed, or Kubernetes annotations dropped'
                  : 'registered again under that name since, or recorded before pvc-pruner kept entity uids'}
                )
              </span>
            ))}
            . {unverified.length === 1 ? 'That name gives' : 'Those names give'}{' '}
            nobody a right to these claims: pruning them needs
            pvc-pruner.unowned.prune.
          </Typography>
        )}
      </Box>
    );
  const evidence = group.nameEvidence;
  const labels = Object.entries(evidence?.labels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  return (
    <Box className={classes.header}>
      <Typography variant="h6" component="h4">
        Probably left by a deleted StatefulSet{' '}
        <span className={classes.code}>{name}</span>
      </Typography>
      <Typography variant="body2" color="textSecondary">
        Namespace {group.namespace}. Nothing was recorded of these claims: only
        their names, read as template{' '}
        <span className={classes.code}>{evidence?.template}</span> of{' '}
        <span className={classes.code}>{name}</span> with an ordinal
        {evidence?.otherParses.length
          ? ` (they also read as ${evidence.otherParses
              .map(p => `${p.template} of ${p.statefulSet}`)
              .join(', ')}; no StatefulSet of those names exists either)`
          : ''}
        , and their labels <span className={classes.code}>{labels}</span>, which
        your entity's selector matches, say whose they were. Pruning asks you to
        type each claim's name.{others}
      </Typography>
    </Box>
  );
}

/** What a prune of the group's claims names them by. */
export function leftByOf(group: LeftBehindGroup) {
  return {
    evidence: group.evidence,
    ...(group.statefulSet.uid ? { statefulSetUid: group.statefulSet.uid } : {}),
  };
}

/** Props of {@link LeftBehindSection}. */
export interface LeftBehindSectionProps {
  entityRef: string;
  /** The answer of `GET /v1/left-behind`, or why it failed. */
  leftBehind?: LeftBehindResponse;
  error?: Error;
  pruneDeniedReason?: string;
}

type Shown = { cluster: string; group: LeftBehindGroup };

const keyOf = ({ cluster, group }: Shown) =>
  statefulSetKey({
    cluster,
    namespace: group.namespace,
    statefulSet: group.statefulSet.name,
  });

/**
 * The groups to show: the listed ones, and those gone from the list (their
 * claims were all pruned) while the card still shows their prune's progress
 * or outcome, which lives in the group's section. Such a group shows no
 * claims, only its prune, until its results are closed.
 */
function useShownGroups(clusters: LeftBehindResponse['clusters']): Shown[] {
  const { jobs } = useActiveJobsContext();
  const lastListed = useRef(new Map<string, Shown>());
  const listed: Shown[] = clusters.flatMap(c =>
    c.ok ? c.groups.map(group => ({ cluster: c.cluster, group })) : [],
  );
  const listedKeys = new Set(listed.map(keyOf));
  for (const shown of listed) lastListed.current.set(keyOf(shown), shown);
  const pruned = [...lastListed.current.entries()]
    .filter(([key]) => !listedKeys.has(key) && jobs[key])
    .map(([, { cluster, group }]) => ({
      cluster,
      group: { ...group, report: { ...group.report, orphans: [] } },
    }));
  return [...listed, ...pruned];
}

/**
 * The claims deleted StatefulSets left behind, on the card of an entity that
 * claims them: a section per deleted StatefulSet, with the prune flow of the
 * card's StatefulSets (dialog, typed confirmation, live progress).
 */
export function LeftBehindSection(props: LeftBehindSectionProps) {
  const { entityRef, leftBehind, error, pruneDeniedReason } = props;
  const clusters = leftBehind?.clusters ?? [];
  const shown = useShownGroups(clusters);
  if (error)
    return (
      <Alert severity="warning">
        Could not look for claims of deleted StatefulSets:{' '}
        {describeError(error)}
      </Alert>
    );
  if (shown.length === 0 && !clusters.some(c => !c.ok || c.withheld))
    return null;
  return (
    <Box component="section" aria-label="Claims of deleted StatefulSets" mt={2}>
      <Typography variant="h6" component="h3" gutterBottom>
        Claims of deleted StatefulSets
      </Typography>
      {clusters.map(c =>
        c.ok ? (
          <Box key={c.cluster}>
            {c.withheld && <WithheldNotice withheld={c.withheld} />}
            {shown
              .filter(s => s.cluster === c.cluster)
              .map(({ group }) => (
                <StatefulSetSection
                  key={`${group.namespace}/${group.statefulSet.name}/${group.evidence}/${group.statefulSet.uid}`}
                  entityRef={entityRef}
                  cluster={c.cluster}
                  statefulSet={group.report}
                  pruneDeniedReason={pruneDeniedReason}
                  header={
                    <LeftBehindGroupHeader
                      group={group}
                      entityRef={entityRef}
                    />
                  }
                  leftBy={leftByOf(group)}
                />
              ))}
          </Box>
        ) : (
          <Alert key={c.cluster} severity="warning">
            Cluster {c.cluster}: {c.error.message}
          </Alert>
        ),
      )}
    </Box>
  );
}
