import {
  claimBytes,
  OrphanedPvc,
  PricingSummary,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { PriceList } from './PriceList';

const sumCosts = (orphans: OrphanedPvc[]) =>
  orphans.reduce((n, o) => n + (o.monthlyCost ?? 0), 0);

/** The StatefulSet with the monthly cost of each orphan, and of its reclaimable and its retained ones. */
export function priceStatefulSet(
  prices: PriceList,
  sts: StatefulSetOrphans,
): StatefulSetOrphans {
  const orphans = sts.orphans.map(o => {
    const monthlyCost = prices.monthlyCost(claimBytes(o), o.storageClassName);
    return monthlyCost === undefined ? o : { ...o, monthlyCost };
  });
  return {
    ...sts,
    orphans,
    reclaimableMonthlyCost: sumCosts(orphans.filter(o => !o.volume?.retained)),
    retainedMonthlyCost: sumCosts(orphans.filter(o => o.volume?.retained)),
  };
}

/** The currency, and the StorageClasses of orphans that found no price (so are in no cost). */
export function pricingSummary(
  prices: PriceList,
  statefulSets: StatefulSetOrphans[],
): PricingSummary {
  const unpriced = new Set<string>();
  for (const sts of statefulSets)
    for (const o of sts.orphans)
      if (o.monthlyCost === undefined)
        unpriced.add(o.storageClassName ?? '(none)');
  return {
    currency: prices.currency,
    unpricedStorageClasses: [...unpriced].sort(),
    ...(prices.snapshotPerGiBMonth !== undefined
      ? { snapshotPricePerGiBMonth: prices.snapshotPerGiBMonth }
      : {}),
  };
}
