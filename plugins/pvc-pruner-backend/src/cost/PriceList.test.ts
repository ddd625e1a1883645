import { ConfigReader } from '@backstage/config';
import { StatefulSetOrphans } from 'backstage-plugin-pvc-pruner-common';
import { priceStatefulSet, pricingSummary } from './costs';
import { PriceList } from './PriceList';
import {
  GIB,
  orphanedClaim,
  statefulSetReport,
} from '../__testUtils__/orphanReports';

const config = (pricing: unknown) =>
  new ConfigReader({ pvcPruner: { pricing } } as any);

describe('PriceList.fromConfig', () => {
  it('is undefined without pvcPruner.pricing, so nothing gets a made-up price', () => {
    expect(PriceList.fromConfig(new ConfigReader({}))).toBeUndefined();
  });

  it('prices a GiB-month per StorageClass, dots in names included, else by the default', () => {
    const prices = PriceList.fromConfig(
      config({
        currency: 'EUR',
        defaultPricePerGiBMonth: 0.1,
        storageClasses: { 'fast.ssd': 0.25, standard: 0.04 },
      }),
    )!;
    expect(prices.currency).toBe('EUR');
    expect(prices.monthlyCost(20 * GIB, 'fast.ssd')).toBeCloseTo(5);
    expect(prices.monthlyCost(20 * GIB, 'standard')).toBeCloseTo(0.8);
    expect(prices.monthlyCost(20 * GIB, 'other')).toBeCloseTo(2);
    expect(prices.monthlyCost(20 * GIB, undefined)).toBeCloseTo(2);
  });

  it('prices kept snapshots by their own price, never by a StorageClass price', () => {
    const prices = PriceList.fromConfig(
      config({
        currency: 'EUR',
        defaultPricePerGiBMonth: 0.1,
        snapshotPricePerGiBMonth: 0.05,
      }),
    )!;
    expect(prices.snapshotMonthlyCost(20 * GIB)).toBeCloseTo(1);
    expect(
      PriceList.fromConfig(
        config({ currency: 'EUR', defaultPricePerGiBMonth: 0.1 }),
      )!.snapshotMonthlyCost(20 * GIB),
    ).toBeUndefined();
  });

  it('has no price for an unlisted StorageClass without a default', () => {
    const prices = PriceList.fromConfig(
      config({ currency: 'USD', storageClasses: { gp3: 0.08 } }),
    )!;
    expect(prices.monthlyCost(GIB, 'gp3')).toBeCloseTo(0.08);
    expect(prices.monthlyCost(GIB, 'io2')).toBeUndefined();
  });

  it.each([
    [{ currency: 'euro', defaultPricePerGiBMonth: 1 }, /ISO 4217.*"euro"/],
    [{ currency: 'XYZ', defaultPricePerGiBMonth: 1 }, /ISO 4217.*"XYZ"/],
    [
      { currency: 'EUR', defaultPricePerGiBMonth: -1 },
      /defaultPricePerGiBMonth must be a price of zero or more, got -1/,
    ],
    [
      { currency: 'EUR', snapshotPricePerGiBMonth: -0.05 },
      /snapshotPricePerGiBMonth must be a price of zero or more, got -0.05/,
    ],
    [
      { currency: 'EUR', storageClasses: { gp3: '0.08' } },
      /storageClasses.gp3 must be a price of zero or more, got "0.08"/,
    ],
  ])('refuses %j at start, naming the key', (pricing, message) => {
    expect(() => PriceList.fromConfig(config(pricing))).toThrow(message);
  });
});

function statefulSet(
  orphans: Array<{ gib: number; storageClass?: string; retained?: boolean }>,
): StatefulSetOrphans {
  return statefulSetReport(
    'shop',
    'db',
    orphans.map((o, i) =>
      orphanedClaim('db', i + 1, o.gib, {
        uid: `u${i}`,
        storageClassName: o.storageClass,
        volume: { name: `pv-${i}`, retained: Boolean(o.retained) },
      }),
    ),
    { uid: 'sts', reclaimableBytes: 0 },
  );
}

describe('priceStatefulSet', () => {
  const prices = PriceList.of({
    currency: 'EUR',
    storageClasses: { standard: 0.1 },
  });

  it('prices each orphan, and sums what pruning saves apart from what Retain volumes keep costing', () => {
    const priced = priceStatefulSet(
      prices,
      statefulSet([
        { gib: 10, storageClass: 'standard' },
        { gib: 30, storageClass: 'standard', retained: true },
        { gib: 50, storageClass: 'archive' },
      ]),
    );
    expect(priced.orphans.map(o => o.monthlyCost)).toEqual([
      expect.closeTo(1),
      expect.closeTo(3),
      undefined,
    ]);
    expect(priced.reclaimableMonthlyCost).toBeCloseTo(1);
    expect(priced.retainedMonthlyCost).toBeCloseTo(3);
    expect(pricingSummary(prices, [priced])).toEqual({
      currency: 'EUR',
      unpricedStorageClasses: ['archive'],
    });
  });

  it('names the snapshot price in the summary when one is set', () => {
    const withSnapshots = PriceList.of({
      currency: 'EUR',
      storageClasses: { standard: 0.1 },
      snapshotPricePerGiBMonth: 0.05,
    });
    expect(pricingSummary(withSnapshots, [])).toEqual({
      currency: 'EUR',
      unpricedStorageClasses: [],
      snapshotPricePerGiBMonth: 0.05,
    });
  });
});
