import { Config } from '@backstage/config';

const GIB = 2 ** 30;

function price(value: unknown, key: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new Error(
      `pvcPruner.pricing.${key} must be a price of zero or more, got ${JSON.stringify(
        value,
      )}`,
    );
  return value;
}

/**
 * Storage prices from `pvcPruner.pricing`: what a GiB costs per month, per
 * StorageClass or by default. The one place a cost is computed; responses
 * carry the results, so the frontend never prices anything itself.
 */
export class PriceList {
  private constructor(
    readonly currency: string,
    private readonly defaultPerGiBMonth: number | undefined,
    private readonly perStorageClass: ReadonlyMap<string, number>,
    /** `snapshotPricePerGiBMonth`: a GiB-month of kept VolumeSnapshots, by restore size. */
    readonly snapshotPerGiBMonth?: number,
  ) {}

  /** The configured prices, or undefined when `pvcPruner.pricing` is not set. */
  static fromConfig(root: Config): PriceList | undefined {
    const config = root.getOptionalConfig('pvcPruner.pricing');
    if (!config) return undefined;
    const currency = config.getString('currency');
    if (
      !/^[A-Z]{3}$/.test(currency) ||
      !Intl.supportedValuesOf('currency').includes(currency)
    )
      throw new Error(
        `pvcPruner.pricing.currency must be an ISO 4217 currency code such as USD or EUR, got "${currency}"`,
      );
    // Read whole: StorageClass names may contain dots, which config keys would take for paths.
    const classes =
      config.getOptional<Record<string, unknown>>('storageClasses') ?? {};
    const perStorageClass = new Map(
      Object.entries(classes).map(([name, value]) => [
        name,
        price(value, `storageClasses.${name}`),
      ]),
    );
    const fallback = config.getOptional('defaultPricePerGiBMonth');
    const snapshots = config.getOptional('snapshotPricePerGiBMonth');
    return new PriceList(
      currency,
      fallback === undefined
        ? undefined
        : price(fallback, 'defaultPricePerGiBMonth'),
      perStorageClass,
      snapshots === undefined
        ? undefined
        : price(snapshots, 'snapshotPricePerGiBMonth'),
    );
  }

  static of(options: {
    currency: string;
    defaultPricePerGiBMonth?: number;
    storageClasses?: Record<string, number>;
    snapshotPricePerGiBMonth?: number;
  }): PriceList {
    return new PriceList(
      options.currency,
      options.defaultPricePerGiBMonth,
      new Map(Object.entries(options.storageClasses ?? {})),
      options.snapshotPricePerGiBMonth,
    );
  }

  /** The monthly cost of keeping a snapshot of `bytes` (its restore size), or undefined when snapshots have no price. */
  snapshotMonthlyCost(bytes: number): number | undefined {
    const perGiB = this.snapshotPerGiBMonth;
    return perGiB === undefined ? undefined : (bytes / GIB) * perGiB;
  }

  /** The monthly cost of `bytes` on a StorageClass, or undefined when it has no price. */
  monthlyCost(
    bytes: number,
    storageClass: string | undefined,
  ): number | undefined {
    const perGiB = this.pricePerGiBMonth(storageClass);
    return perGiB === undefined ? undefined : (bytes / GIB) * perGiB;
  }

  /** The price of a GiB-month on a StorageClass, falling back to the default. */
  pricePerGiBMonth(storageClass: string | undefined): number | undefined {
    return (
      (storageClass !== undefined
        ? this.perStorageClass.get(storageClass)
        : undefined) ?? this.defaultPerGiBMonth
    );
  }
}
