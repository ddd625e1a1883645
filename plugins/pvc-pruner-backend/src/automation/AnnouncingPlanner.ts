import {
  announcementKey,
  AnnouncementStore,
  Announcements,
} from './AnnouncementStore';
import type {
  AutoPrunePlan,
  AutoPrunePlanning,
  PlannedClaim,
  PlannedGroup,
} from './types';

/**
 * The most claims one run announces (and so may prune or tell of), in plan
 * order (oldest eligible first); the rest wait for later runs. The run's
 * limits stop it far earlier anyway.
 */
export const MAX_ANNOUNCED_CLAIMS = 10_000;

/**
 * Makes sure owners were told before an automatic delete: a claim is
 * eligible only once it was announced (first planned as eligible or
 * upcoming) at least `notifyBefore` earlier. First sightings are recorded
 * by every scan, long before anyone opts in, so without this an entity that
 * opts in (or lowers its grace, or the platform that widens its allow-lists)
 * would have its old orphans deleted at the next run, unannounced. Until
 * then such a claim is upcoming, eligible on its announcement plus
 * `notifyBefore`, so the run's before-notice names that date.
 */
export class AnnouncingPlanner implements AutoPrunePlanning {
  constructor(
    private readonly deps: {
      planning: AutoPrunePlanning;
      announcements: Pick<AnnouncementStore, 'announce'>;
      notifyBeforeMs: number;
    },
  ) {}

  async plan(): Promise<AutoPrunePlan> {
    const plan = await this.deps.planning.plan();
    const groups = withinCap(plan.groups);
    const announced = await this.deps.announcements.announce(
      groups.flatMap(g =>
        [...g.eligible, ...g.upcoming].map(c => ({
          cluster: g.cluster,
          uid: c.uid,
        })),
      ),
      plan.clustersFailed.map(f => f.cluster),
    );
    return { ...plan, groups: groups.map(g => this.held(g, announced)) };
  }

  /** The group with each claim eligible only once its announcement is `notifyBefore` old. */
  private held(group: PlannedGroup, announced: Announcements): PlannedGroup {
    const now = announced.now.getTime();
    const eligible: PlannedClaim[] = [];
    const upcoming: PlannedClaim[] = [];
    for (const claim of [...group.eligible, ...group.upcoming]) {
      const at = announced.announcedAt.get(
        announcementKey(group.cluster, claim.uid),
      );
      // Gone since it was written (another run forgot it): as if announced now.
      const since = at ? Date.parse(at) : now;
      const eligibleAtMs = Math.max(
        Date.parse(claim.eligibleAt),
        since + this.deps.notifyBeforeMs,
      );
      const held = {
        ...claim,
        eligibleAt: new Date(eligibleAtMs).toISOString(),
        ...(since >= now ? { newlyAnnounced: true } : {}),
      };
      if (eligibleAtMs <= now) eligible.push(held);
      else upcoming.push(held);
    }
    return { ...group, eligible, upcoming };
  }
}

/** The groups with at most {@link MAX_ANNOUNCED_CLAIMS} eligible and upcoming claims in all, in plan order. */
function withinCap(groups: PlannedGroup[]): PlannedGroup[] {
  let left = MAX_ANNOUNCED_CLAIMS;
  return groups.map(group => {
    const eligible = group.eligible.slice(0, Math.max(left, 0));
    left -= eligible.length;
    const upcoming = group.upcoming.slice(0, Math.max(left, 0));
    left -= upcoming.length;
    return eligible.length === group.eligible.length &&
      upcoming.length === group.upcoming.length
      ? group
      : { ...group, eligible, upcoming };
  });
}
