import type {
  OrphanedPvc,
  SnapshotPlan,
  SnapshotSettings,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { mapLimited } from '../mapLimited';
import type { SnapshotOptions } from '../options';
import {
  SnapshotClassResolver,
  UNBOUND_NO_SNAPSHOT,
  type SnapshotClassReads,
} from './SnapshotClassResolver';

/** Distinct StorageClasses one answer may read (only volumes without a CSI driver need theirs). */
export const MAX_STORAGE_CLASS_READS = 16;
/** A reason longer than this (a cluster's many class names) is cut. */
const MAX_REASON_LENGTH = 600;
/** Orphans resolved at once; each is a lookup once the classes are listed. */
const PLAN_CONCURRENCY = 16;
/** How long an orphans answer waits for the cluster's snapshot reads before it gives each claim the reason. */
export const DEFAULT_READ_WAIT_MS = 3000;

/**
 * Tells the card, before it prunes, what a prune that asks for snapshots
 * would do with each orphan: the VolumeSnapshotClass it would use, or why it
 * takes none. It resolves as a job does (the same SnapshotClassResolver),
 * from what the scan reports of each claim and its volume, so a scan from
 * the watch cache adds one list of VolumeSnapshotClasses per cluster and
 * answer, not a request per claim. A cluster whose classes cannot be read
 * gives each claim the reason instead of failing the scan.
 */
export class OrphanSnapshotPlanner {
  /** Each report planned, kept while its plans stay the same, so a cached report keeps its identity (and kept JSON). */
  private readonly planned = new WeakMap<
    StatefulSetOrphans,
    { key: string; result: StatefulSetOrphans }
  >();

  constructor(
    private readonly options: Pick<
      SnapshotOptions,
      'enabled' | 'retentionDays' | 'required' | 'classByStorageClass'
    >,
    /** A slow snapshot API must not hold up the card's scan. */
    private readonly readWaitMs = DEFAULT_READ_WAIT_MS,
  ) {}

  /** What the card needs of `pvcPruner.snapshots`. */
  get settings(): SnapshotSettings {
    const { enabled, retentionDays, required } = this.options;
    return enabled ? { enabled, retentionDays, required } : { enabled };
  }

  /** One cluster's StatefulSets, each orphan with its `snapshotPlan`; unchanged while snapshots are off. */
  async plan(
    reads: SnapshotClassReads,
    statefulSets: StatefulSetOrphans[],
  ): Promise<StatefulSetOrphans[]> {
    if (!this.options.enabled) return statefulSets;
    const orphans = statefulSets.flatMap(s => s.orphans);
    if (orphans.length === 0) return statefulSets;
    const resolver = new SnapshotClassResolver(
      onceEach(reads, this.readWaitMs),
      this.options.classByStorageClass,
    );
    const plans = await mapLimited(orphans, PLAN_CONCURRENCY, o =>
      planOf(resolver, o),
    );
    let next = 0;
    return statefulSets.map(sts => {
      const own = plans.slice(next, (next += sts.orphans.length));
      const key = JSON.stringify(own);
      const kept = this.planned.get(sts);
      if (kept?.key === key) return kept.result;
      const result = {
        ...sts,
        orphans: sts.orphans.map((o, i) => ({ ...o, snapshotPlan: own[i] })),
      };
      this.planned.set(sts, { key, result });
      return result;
    });
  }
}

async function planOf(
  resolver: SnapshotClassResolver,
  orphan: OrphanedPvc,
): Promise<SnapshotPlan> {
  const { volume } = orphan;
  if (!volume) return { kind: 'not-needed', reason: UNBOUND_NO_SNAPSHOT };
  try {
    const choice = await resolver.resolveFor({
      storageClass: orphan.storageClassName,
      volume: {
        name: volume.name,
        reclaimPolicy: volume.reclaimPolicy,
        csi: volume.csiDriver ? { driver: volume.csiDriver } : undefined,
        // The scan found the volume through the claim; the job checks its claimRef before trusting Retain.
        boundToClaim: true,
      },
    });
    return choice.kind === 'class'
      ? { kind: 'class', volumeSnapshotClass: choice.name }
      : { kind: choice.kind, reason: capped(choice.reason) };
  } catch (e) {
    // As a job would: it holds back a claim whose class it cannot tell.
    return {
      kind: 'error',
      reason: capped(
        `its VolumeSnapshotClass could not be told: ${(e as Error).message}`,
      ),
    };
  }
}

/**
 * The cluster's reads, each made once for the whole answer, failures
 * included (the resolver asks again after a failure, which here would be a
 * request per claim), and at most MAX_STORAGE_CLASS_READS StorageClasses.
 */
function onceEach(
  reads: SnapshotClassReads,
  waitMs: number,
): SnapshotClassReads {
  let classes: ReturnType<SnapshotClassReads['listVolumeSnapshotClasses']>;
  const storageClasses = new Map<
    string,
    ReturnType<SnapshotClassReads['readStorageClass']>
  >();
  return {
    listVolumeSnapshotClasses: () =>
      (classes ??= withinWait(
        reads.listVolumeSnapshotClasses(),
        waitMs,
        'list VolumeSnapshotClasses',
      )),
    readStorageClass: name => {
      let read = storageClasses.get(name);
      if (!read) {
        read =
          storageClasses.size < MAX_STORAGE_CLASS_READS
            ? withinWait(
                reads.readStorageClass(name),
                waitMs,
                `read StorageClass ${name}`,
              )
            : Promise.reject(
                new Error(
                  `its StorageClass ${name} was not read: the claims shown name more than ${MAX_STORAGE_CLASS_READS} StorageClasses whose volumes name no CSI driver`,
                ),
              );
        storageClasses.set(name, read);
      }
      return read;
    },
  };
}

/** The read, or a failure once it has taken longer than `waitMs` (the request itself runs on, bounded by the cluster timeout). */
function withinWait<T>(read: Promise<T>, waitMs: number, what: string) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `the cluster did not ${what} within ${
              waitMs / 1000
            } s; a prune asks again`,
          ),
        ),
      waitMs,
    );
  });
  return Promise.race([read, late]).finally(() => clearTimeout(timer));
}

function capped(reason: string): string {
  return reason.length > MAX_REASON_LENGTH
    ? `${reason.slice(0, MAX_REASON_LENGTH - 1)}…`
    : reason;
}
