import type {
  V1PersistentVolumeClaim,
  V1StatefulSet,
} from '@kubernetes/client-node';
import type {
  ClaimKeep,
  OrphanedPvc,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import type { LocatedCluster } from '../kubernetes';
import { errorSection, OrphanFinder } from '../orphans';
import {
  ClaimantIndex,
  selectsByKubernetesId,
  WorkloadCatalog,
  WorkloadEntity,
} from '../ownership';
import type { AutoPruneOptions } from './autoPruneOptions';
import { automationVerdict, entityAutoPrune } from './autoPruneVerdict';
import { annotationKeep } from './keepAnnotation';
import type {
  AutoPrunePlan,
  AutoPrunePlanning,
  ClaimKeeps,
  PlannedClaim,
  PlannedGroup,
} from './types';

/**
 * A run plans at most this many StatefulSets, those with the oldest
 * eligible claims first; the rest wait for the next run (the run's limits
 * stop it far earlier anyway), and the plan counts them in `groupsLeftOut`.
 */
export const MAX_PLANNED_GROUPS = 2000;

/** What the planner reads. */
export interface AutoPrunePlannerDeps {
  /** The warm catalog read: every entity with Kubernetes annotations. */
  catalog: Pick<WorkloadCatalog, 'warm'>;
  /** Finds the orphans from the watch caches; with an annotator, so that it records and answers first sightings. */
  finder: Pick<OrphanFinder, 'clustersOf' | 'scanCluster'>;
  /** The database's clock, which dates first sightings (the sighting store's). */
  databaseNow: () => Promise<Date>;
  keeps: Pick<ClaimKeeps, 'keepsOf'>;
  /**
   * The first sightings as the database has them now (the sighting store's
   * `firstSeenInDatabase`): what eligibility is judged by, since this
   * replica's memory may not know yet that another saw a claim in use.
   */
  firstSightings: (uids: readonly string[]) => Promise<Map<string, string>>;
  options: AutoPruneOptions;
}

const byEligibleAt = (a: PlannedClaim, b: PlannedClaim) =>
  a.eligibleAt.localeCompare(b.eligibleAt) || a.name.localeCompare(b.name);

/** An automated StatefulSet's orphans, before keeps and ages are judged. */
interface Candidate {
  report: StatefulSetOrphans;
  through: WorkloadEntity;
  claimants: string[];
  graceMs: number;
  /** Each orphan with its claim as the cache has it. */
  orphans: Array<{ orphan: OrphanedPvc; claim: V1PersistentVolumeClaim }>;
}

type ClusterCandidates =
  | { cluster: string; candidates: Candidate[] }
  | { cluster: string; error: string };

/**
 * Plans an automatic run: the StatefulSets of entities that opted in
 * (`pvc-pruner.backstage.io/auto-prune`) which automation may act on (every
 * claimant opted in: {@link automationVerdict}), and of each, its orphans
 * past their grace, those soon to be, and those kept. Reads the watch
 * caches only, never the API server: a cluster whose cache is not synced,
 * or has a disconnected watch, is reported in `clustersFailed` and nothing
 * there is planned. Only
 * orphans of live StatefulSets are planned, so a claim a deleted
 * StatefulSet may have left is never eligible; the orphan rule already
 * keeps the claims that are mounted, terminating, paused or in an
 * autoscaler's range, so they are never orphans here.
 */
export class AutoPrunePlanner implements AutoPrunePlanning {
  constructor(private readonly deps: AutoPrunePlannerDeps) {}

  async plan(): Promise<AutoPrunePlan> {
    const { options } = this.deps;
    if (!options.enabled)
      return { considered: 0, groups: [], clustersFailed: [] };
    const index = await this.deps.catalog.warm();
    const optedIn = index.entities.filter(
      e => entityAutoPrune(e.entity, options).state === 'opted-in',
    );
    if (optedIn.length === 0)
      return { considered: 0, groups: [], clustersFailed: [] };
    const clusters = (await this.deps.finder.clustersOf({})).filter(
      c => !options.clusters || options.clusters.has(c.name),
    );
    const found = await Promise.all(
      clusters.map(c => this.candidatesIn(c, index, optedIn)),
    );
    // After the scans, which record first sightings by the same clock.
    const now = (await this.deps.databaseNow()).getTime();
    let considered = 0;
    const groups: PlannedGroup[] = [];
    const clustersFailed: AutoPrunePlan['clustersFailed'] = [];
    for (const result of found) {
      if ('error' in result) {
        clustersFailed.push({ cluster: result.cluster, error: result.error });
        continue;
      }
      const { cluster, candidates } = result;
      const uids = candidates.flatMap(c => c.orphans.map(o => o.orphan.uid));
      const keeps =
        uids.length > 0
          ? await this.deps.keeps.keepsOf(cluster, uids)
          : new Map<string, ClaimKeep>();
      const firstSeen =
        uids.length > 0
          ? await this.deps.firstSightings(uids)
          : new Map<string, string>();
      for (const candidate of candidates) {
        considered += candidate.orphans.length;
        const group = this.judged(cluster, candidate, keeps, firstSeen, now);
        if (group) groups.push(group);
      }
    }
    groups.sort(byOldestEligible);
    return {
      considered,
      groups: groups.slice(0, MAX_PLANNED_GROUPS),
      clustersFailed,
      ...(groups.length > MAX_PLANNED_GROUPS
        ? { groupsLeftOut: groups.length - MAX_PLANNED_GROUPS }
        : {}),
    };
  }

  /** The automated StatefulSets of the opted-in entities in one cluster, each once, from its watch cache only. */
  private async candidatesIn(
    details: LocatedCluster,
    index: ClaimantIndex,
    optedIn: WorkloadEntity[],
  ): Promise<ClusterCandidates> {
    const cluster = details.name;
    let scan;
    try {
      scan = await this.deps.finder.scanCluster(details, optedIn, {
        cacheOnly: true,
      });
    } catch (e) {
      return { cluster, error: errorSection(cluster, e).error.message };
    }
    const { cache } = scan;
    if (!cache)
      return {
        cluster,
        error: `the watch cache of "${cluster}" is not synced`,
      };
    // A disconnected watch may have missed a pod that mounted a claim, and so the grace that use restarts.
    if (scan.staleness)
      return {
        cluster,
        error: `the watch cache of "${cluster}" has been disconnected for ${
          scan.staleness.secondsSinceSync
        }s (${scan.staleness.disconnectedWatches.join(
          ', ',
        )}): nothing there is pruned until it reconnects`,
      };
    const seen = new Set<string>();
    const candidates: Candidate[] = [];
    for (const reports of scan.byEntity.values())
      for (const report of reports) {
        if (seen.has(report.uid) || report.orphans.length === 0) continue;
        seen.add(report.uid);
        const statefulSet = scan.objects.get(
          `${report.namespace}/${report.name}`,
        );
        if (!statefulSet) continue;
        const candidate = this.candidateOf(
          cluster,
          report,
          statefulSet,
          index,
          (namespace, name) => cache.claims.get(namespace, name),
        );
        if (candidate) candidates.push(candidate);
      }
    return { cluster, candidates };
  }

  /** The StatefulSet's orphans if automation may act on it, judged against every claimant in the catalog. */
  private candidateOf(
    cluster: string,
    report: StatefulSetOrphans,
    statefulSet: V1StatefulSet,
    index: ClaimantIndex,
    cachedClaim: (
      namespace: string,
      name: string,
    ) => V1PersistentVolumeClaim | undefined,
  ): Candidate | undefined {
    const claimants = index.claimantsOf(cluster, statefulSet);
    const verdict = automationVerdict(
      this.deps.options,
      { cluster, namespace: report.namespace },
      claimants,
    );
    if (!verdict.automated) return undefined;
    // Claimants come sorted by ref; the verdict made sure one selects it by kubernetes-id.
    const through = claimants.filter(selectsByKubernetesId)[0];
    const orphans = report.orphans.flatMap(orphan => {
      const claim = cachedClaim(report.namespace, orphan.name);
      // Replaced or gone since it was classified: the next run judges it afresh.
      return claim?.metadata?.uid === orphan.uid ? [{ orphan, claim }] : [];
    });
    return {
      report,
      through,
      claimants: claimants.map(c => c.entityRef).sort(),
      graceMs: verdict.graceMs,
      orphans,
    };
  }

  /** The candidate's orphans sorted into eligible, upcoming and kept; undefined when none is any. */
  private judged(
    cluster: string,
    candidate: Candidate,
    keeps: ReadonlyMap<string, ClaimKeep>,
    firstSeen: ReadonlyMap<string, string>,
    now: number,
  ): PlannedGroup | undefined {
    const { report, graceMs } = candidate;
    const eligible: PlannedClaim[] = [];
    const upcoming: PlannedClaim[] = [];
    const kept: PlannedGroup['kept'] = [];
    for (const { orphan, claim } of candidate.orphans) {
      const keep = keeps.get(orphan.uid) ?? annotationKeep(claim);
      if (keep) {
        kept.push({ name: orphan.name, uid: orphan.uid, keep });
        continue;
      }
      // Without a first sighting in the database, no grace can have passed.
      const since = firstSeen.get(orphan.uid);
      if (!since) continue;
      const eligibleAtMs = Date.parse(since) + graceMs;
      if (Number.isNaN(eligibleAtMs)) continue;
      const planned = plannedClaim(orphan, eligibleAtMs);
      if (eligibleAtMs <= now) eligible.push(planned);
      else if (eligibleAtMs - now <= this.deps.options.notifyBeforeMs)
        upcoming.push(planned);
    }
    if (eligible.length + upcoming.length + kept.length === 0) return undefined;
    eligible.sort(byEligibleAt);
    upcoming.sort(byEligibleAt);
    return {
      cluster,
      namespace: report.namespace,
      statefulSet: report.name,
      through: candidate.through,
      claimants: candidate.claimants,
      graceMs,
      eligible,
      upcoming,
      kept,
    };
  }
}

function plannedClaim(orphan: OrphanedPvc, eligibleAtMs: number): PlannedClaim {
  return {
    name: orphan.name,
    uid: orphan.uid,
    ordinal: orphan.ordinal,
    bytes: orphan.capacityBytes ?? orphan.requestedBytes,
    eligibleAt: new Date(eligibleAtMs).toISOString(),
    ...(orphan.storageClassName
      ? { storageClassName: orphan.storageClassName }
      : {}),
    ...(orphan.monthlyCost !== undefined
      ? { monthlyCost: orphan.monthlyCost }
      : {}),
    retained: orphan.volume?.retained ?? false,
  };
}

/** Groups with the oldest eligible claim first; those with none eligible after, soonest upcoming first. */
function byOldestEligible(a: PlannedGroup, b: PlannedGroup): number {
  const first = (g: PlannedGroup) =>
    g.eligible[0]?.eligibleAt ?? `~${g.upcoming[0]?.eligibleAt ?? ''}`;
  return (
    first(a).localeCompare(first(b)) ||
    `${a.cluster}/${a.namespace}/${a.statefulSet}`.localeCompare(
      `${b.cluster}/${b.namespace}/${b.statefulSet}`,
    )
  );
}
