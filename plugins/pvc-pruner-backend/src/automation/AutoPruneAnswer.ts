import type { V1StatefulSet } from '@kubernetes/client-node';
import {
  AUTO_PRUNE_ANNOTATION,
  AutoPruneStatus,
  ClaimKeep,
  ClusterOrphans,
  KEEP_CLAIM_ANNOTATION,
  OrphanedPvc,
  OrphansResponse,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import type { Admit, EntityWorkloadTarget } from '../orphans';
import type { ClaimantIndex, WorkloadCatalog } from '../ownership';
import type { AutoPruneOptions } from './autoPruneOptions';
import {
  automationVerdict,
  AutomationVerdict,
  entityAutoPrune,
} from './autoPruneVerdict';
import type { AnnouncementStore } from './AnnouncementStore';
import type { AutoPruneSchedule, ClaimKeeps } from './types';

/** When automatic pruning first told the claim's owners it will prune it (AnnouncementStore): no earlier than `notifyBefore` after that. */
export interface ClaimNotice {
  /** The claim's announcement; absent, it is not announced yet, and would be now at the earliest. */
  announcedAt?: string;
  now: number;
  notifyBeforeMs: number;
}

/** When automatic pruning may delete an orphan, or undefined when it may not. */
export function eligibleAt(
  orphan: Pick<OrphanedPvc, 'firstSeenOrphanedAt'>,
  verdict: AutomationVerdict,
  keep: ClaimKeep | undefined,
  notice?: ClaimNotice,
): string | undefined {
  if (!verdict.automated || !orphan.firstSeenOrphanedAt) return undefined;
  const afterGrace = Math.max(
    Date.parse(orphan.firstSeenOrphanedAt) + verdict.graceMs,
    notice
      ? (notice.announcedAt ? Date.parse(notice.announcedAt) : notice.now) +
          notice.notifyBeforeMs
      : -Infinity,
  );
  if (!keep) return new Date(afterGrace).toISOString();
  // A card keep with an end is eligible once both have passed; any other keep never.
  if (keep.source !== 'card' || !keep.until) return undefined;
  // A kept claim is not planned, so it is announced afresh once its keep ends.
  const afterKeep = Date.parse(keep.until) + (notice?.notifyBeforeMs ?? 0);
  return new Date(Math.max(afterGrace, afterKeep)).toISOString();
}

/**
 * The keep the card shows: the card keep, unless it has an end and the
 * claim's keep annotation keeps it with none (which then decides that the
 * claim is never eligible).
 */
function shownKeep(
  card: ClaimKeep | undefined,
  annotated: ClaimKeep | undefined,
): ClaimKeep | undefined {
  if (card?.until && annotated && !annotated.until) return annotated;
  return card ?? annotated;
}

/** One request's answer: what its admission saw of each StatefulSet, then the answer with automatic pruning added. */
export interface AutoPruneAnswering {
  /** `admit`, remembering each StatefulSet it is asked about. */
  admitting(admit: Admit): Admit;
  answer(found: OrphansResponse): Promise<OrphansResponse>;
}

/**
 * Adds automatic pruning to an entity's orphans: whether the entity opted
 * in (and what is wrong with its annotation), whether each StatefulSet is
 * automated (judged over every claimant in the catalog, not only this
 * entity), and per orphan its keep (the card's, else its annotation's) and
 * when it becomes eligible.
 */
export class AutoPruneAnswer {
  constructor(
    private readonly deps: {
      options: AutoPruneOptions;
      workloads: Pick<WorkloadCatalog, 'warm'>;
      keeps: Pick<ClaimKeeps, 'keepsOf'>;
      /** When automatic runs announced the claims; absent (tests of other concerns), eligibility is by the grace alone. */
      announcements?: Pick<AnnouncementStore, 'announcementsOf'>;
      snapshotsEnabled: boolean;
      /** When runs happen; absent until the scheduler that runs them is wired. */
      schedule?: AutoPruneSchedule;
    },
  ) {}

  forEntity(target: EntityWorkloadTarget): AutoPruneAnswering {
    const seen = new Map<string, V1StatefulSet>();
    return {
      admitting: admit => found => {
        for (const { cluster, statefulSet } of found)
          seen.set(
            keyOf(
              cluster,
              statefulSet.metadata?.namespace ?? '',
              statefulSet.metadata?.name ?? '',
            ),
            statefulSet,
          );
        return admit(found);
      },
      answer: found => this.answer(target, found, seen),
    };
  }

  private async answer(
    target: EntityWorkloadTarget,
    found: OrphansResponse,
    seen: ReadonlyMap<string, V1StatefulSet>,
  ): Promise<OrphansResponse> {
    const status = await this.status(target);
    if (!this.deps.options.enabled) return { ...found, autoPrune: status };
    const index =
      status.state === 'opted-in'
        ? await this.deps.workloads.warm()
        : undefined;
    const clusters = await Promise.all(
      found.clusters.map(section => this.sectionWith(section, seen, index)),
    );
    return { ...found, clusters, autoPrune: status };
  }

  private async status(target: EntityWorkloadTarget): Promise<AutoPruneStatus> {
    const { options, schedule, snapshotsEnabled } = this.deps;
    const judged = entityAutoPrune(target.entity, options);
    const status: AutoPruneStatus = {
      state: judged.state,
      annotation: AUTO_PRUNE_ANNOTATION,
      keepAnnotation: KEEP_CLAIM_ANNOTATION,
      ...(judged.value !== undefined ? { value: judged.value } : {}),
      ...(judged.problem ? { problem: judged.problem } : {}),
      ...(judged.graceMs !== undefined ? { graceMs: judged.graceMs } : {}),
    };
    if (!options.enabled) return status;
    const [nextRunAt, lastRun] = await Promise.all([
      schedule?.nextRunAt(),
      schedule?.lastRun(),
    ]);
    return {
      ...status,
      minimumGraceMs: options.minimumGraceMs,
      notifyBeforeMs: options.notifyBeforeMs,
      snapshots: snapshotsEnabled,
      ...(nextRunAt ? { nextRunAt } : {}),
      ...(lastRun ? { lastRunAt: lastRun.startedAt } : {}),
    };
  }

  /** A section's StatefulSets with their automation and their orphans' keeps and eligibility; a report nothing is added to stays the same object (its JSON is kept). */
  private async sectionWith(
    section: ClusterOrphans,
    seen: ReadonlyMap<string, V1StatefulSet>,
    index: ClaimantIndex | undefined,
  ): Promise<ClusterOrphans> {
    if (!section.ok) return section;
    const { cluster } = section;
    const uids = section.statefulSets.flatMap(s => s.orphans.map(o => o.uid));
    // No orphans: nothing to keep or make eligible, and no query for it.
    if (uids.length === 0 && !index) return section;
    const keeps = await this.deps.keeps.keepsOf(cluster, uids);
    const announced =
      index && this.deps.announcements
        ? await this.deps.announcements.announcementsOf(cluster, uids)
        : undefined;
    const statefulSets = section.statefulSets.map(sts => {
      const object = seen.get(keyOf(cluster, sts.namespace, sts.name));
      const verdict: AutomationVerdict | undefined =
        index &&
        automationVerdict(
          this.deps.options,
          { cluster, namespace: sts.namespace },
          object ? index.claimantsOf(cluster, object) : [],
        );
      return this.statefulSetWith(
        sts,
        verdict,
        keeps,
        announced &&
          (uid => ({
            announcedAt: announced.announcedAt.get(uid),
            now: announced.now.getTime(),
            notifyBeforeMs: this.deps.options.notifyBeforeMs,
          })),
      );
    });
    return { ...section, statefulSets };
  }

  private statefulSetWith(
    sts: StatefulSetOrphans,
    verdict: AutomationVerdict | undefined,
    keeps: ReadonlyMap<string, ClaimKeep>,
    noticeOf: ((uid: string) => ClaimNotice) | undefined,
  ): StatefulSetOrphans {
    let changed = verdict !== undefined;
    const orphans = sts.orphans.map(o => {
      const keep = shownKeep(keeps.get(o.uid), o.keep);
      const at = verdict && eligibleAt(o, verdict, keep, noticeOf?.(o.uid));
      if (keep === o.keep && !at) return o;
      changed = true;
      return {
        ...o,
        ...(keep ? { keep } : {}),
        ...(at ? { eligibleAt: at } : {}),
      };
    });
    if (!changed) return sts;
    return {
      ...sts,
      orphans,
      ...(verdict
        ? {
            autoPrune: verdict.automated
              ? { automated: true }
              : { automated: false, reason: verdict.reason },
          }
        : {}),
    };
  }
}

function keyOf(cluster: string, namespace: string, name: string) {
  return `${cluster}\n${namespace}\n${name}`;
}
