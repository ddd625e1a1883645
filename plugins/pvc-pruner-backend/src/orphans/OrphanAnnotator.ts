import {
  OrphanTotals,
  PricingSummary,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { PriceList, priceStatefulSet, pricingSummary } from '../cost';
import { InUseClaim, OrphanSightingStore } from '../database';

/** `{ firstSeenOrphanedAt }` of the earliest first sighting among parts, or nothing when none has one. */
export function firstSeenOf(parts: Array<{ firstSeenOrphanedAt?: string }>): {
  firstSeenOrphanedAt?: string;
} {
  let first: string | undefined;
  for (const p of parts)
    if (p.firstSeenOrphanedAt && (!first || p.firstSeenOrphanedAt < first))
      first = p.firstSeenOrphanedAt;
  return first ? { firstSeenOrphanedAt: first } : {};
}

/**
 * What pvc-pruner knows about orphans that the cluster does not: when it
 * first saw each one (recorded as scans see them), and, with
 * `pvcPruner.pricing`, what each costs per month.
 */
export class OrphanAnnotator {
  /**
   * Each report annotated, with the first sightings it was annotated with.
   * A watch cache hands out the same report until the StatefulSet, its
   * claims, pods or a volume change, so the fleet view's thousands of
   * StatefulSets are not copied and priced again on every request.
   */
  private readonly annotated = new WeakMap<
    StatefulSetOrphans,
    { firstSeen: Array<string | undefined>; result: StatefulSetOrphans }
  >();

  /** Each report's claims in use, named once: the fleet view scans thousands of unchanged reports. */
  private readonly inUse = new WeakMap<StatefulSetOrphans, InUseClaim[]>();

  constructor(
    private readonly sightings: OrphanSightingStore,
    private readonly prices?: PriceList,
  ) {}

  /**
   * Records the orphans of one cluster's scan as seen now, and adds first
   * sightings and costs. Claims the scan saw in use lose their sightings: a
   * claim orphaned again starts a new grace.
   */
  async annotate(
    cluster: string,
    statefulSets: StatefulSetOrphans[],
  ): Promise<StatefulSetOrphans[]> {
    await this.sightings.forgetInUse(
      cluster,
      statefulSets.flatMap(sts => this.inUseOf(sts)),
      { skipRecentlyForgotten: true },
    );
    const firstSeen = await this.sightings.record(
      statefulSets.flatMap(sts =>
        sts.orphans.map(o => ({
          uid: o.uid,
          cluster,
          namespace: sts.namespace,
          name: o.name,
        })),
      ),
    );
    return statefulSets.map(sts => {
      const seenAt = sts.orphans.map(o => firstSeen.get(o.uid));
      const kept = this.annotated.get(sts);
      if (kept && kept.firstSeen.every((at, i) => at === seenAt[i]))
        return kept.result;
      const result = this.annotatedWith(sts, seenAt);
      this.annotated.set(sts, { firstSeen: seenAt, result });
      return result;
    });
  }

  private inUseOf(sts: StatefulSetOrphans): InUseClaim[] {
    let claims = this.inUse.get(sts);
    if (!claims) {
      claims = inUseOf(sts);
      this.inUse.set(sts, claims);
    }
    return claims;
  }

  private annotatedWith(
    sts: StatefulSetOrphans,
    seenAt: Array<string | undefined>,
  ): StatefulSetOrphans {
    const orphans = sts.orphans.map((o, i) => ({
      ...o,
      firstSeenOrphanedAt: seenAt[i],
    }));
    const seen = { ...sts, orphans, ...firstSeenOf(orphans) };
    return this.prices ? priceStatefulSet(this.prices, seen) : seen;
  }

  /** Whether costs are computed (`pvcPruner.pricing` is set). */
  get priced(): boolean {
    return this.prices !== undefined;
  }

  /** How the StatefulSets were priced; undefined without pricing. */
  pricing(statefulSets: StatefulSetOrphans[]): PricingSummary | undefined {
    return this.prices && pricingSummary(this.prices, statefulSets);
  }
}

/** The claims of a StatefulSet in use: those of the ordinals it runs, and those a pod mounts. */
function inUseOf(sts: StatefulSetOrphans): InUseClaim[] {
  const { namespace } = sts;
  const running = sts.inUse.flatMap(({ template, ordinals }) =>
    ordinals.map(o => ({ namespace, name: `${template}-${sts.name}-${o}` })),
  );
  const mounted = sts.kept.flatMap(k =>
    k.reason === 'mounted-by-pod' ? [{ namespace, name: k.name }] : [],
  );
  return [...running, ...mounted];
}

/** The sums of some totals, with costs when `priced` (pricing is configured). */
export function sumTotals(
  parts: OrphanTotals[],
  priced: boolean,
): OrphanTotals {
  const totals: OrphanTotals = {
    orphans: 0,
    reclaimableBytes: 0,
    retainedBytes: 0,
  };
  if (priced) {
    totals.reclaimableMonthlyCost = 0;
    totals.retainedMonthlyCost = 0;
  }
  for (const p of parts) {
    totals.orphans += p.orphans;
    totals.reclaimableBytes += p.reclaimableBytes;
    totals.retainedBytes += p.retainedBytes;
    if (priced) {
      totals.reclaimableMonthlyCost! += p.reclaimableMonthlyCost ?? 0;
      totals.retainedMonthlyCost! += p.retainedMonthlyCost ?? 0;
    }
  }
  return totals;
}

/** The totals of one StatefulSet's orphans. */
export function totalsOf(sts: StatefulSetOrphans): OrphanTotals {
  return {
    orphans: sts.orphans.length,
    reclaimableBytes: sts.reclaimableBytes,
    retainedBytes: sts.retainedBytes,
    ...(sts.reclaimableMonthlyCost !== undefined
      ? {
          reclaimableMonthlyCost: sts.reclaimableMonthlyCost,
          retainedMonthlyCost: sts.retainedMonthlyCost ?? 0,
        }
      : {}),
  };
}
