import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import {
  parseQuantity,
  SnapshotTotals,
} from 'backstage-plugin-pvc-pruner-common';
import type { PriceList } from '../cost';
import type { KubeGateway, LocatedCluster } from '../kubernetes';
import { SharedInFlight } from '../orphans/SharedInFlight';
import { labelValue, SNAPSHOT_LABELS } from './snapshotMetadata';
import { MANAGED_SNAPSHOTS } from './SnapshotExpiryTask';
import type { SnapshotSeal } from './SnapshotSeal';

/** How long one cluster's list of kept snapshots answers the fleet before it is read again. */
export const KEPT_SNAPSHOTS_CACHE_MS = 30_000;

/** One kept snapshot, as little as the totals need. */
interface Kept {
  namespace: string;
  statefulSet: string;
  bytes: number;
}

/** A StatefulSet of the fleet answer. */
export interface StatefulSetPlace {
  cluster: string;
  namespace: string;
  name: string;
}

/** The reads of the clusters, started together, to be matched once the answer's StatefulSets are known. */
export type KeptSnapshotReads = Promise<Map<string, Kept[] | undefined>>;

/**
 * `FleetTotals.snapshots`: pvc-pruner's kept snapshots of the StatefulSets a
 * fleet answer lists. One cluster-wide list per cluster (label
 * `app.kubernetes.io/managed-by=pvc-pruner`), kept
 * {@link KEPT_SNAPSHOTS_CACHE_MS} and shared by the reads that overlap, for
 * clusters read with the plugin's own credentials; a cluster read with a
 * user's token is read for that request only, never cached for another
 * user. A cluster that fails, or has no snapshot API, contributes nothing.
 */
export class KeptSnapshotTotals {
  private readonly cached = new Map<
    string,
    { at: number; gateway: KubeGateway; kept: Kept[] }
  >();
  private readonly inFlight = new SharedInFlight<Kept[]>();
  private readonly now: () => number;

  constructor(
    private readonly deps: {
      gateways: {
        forCluster(
          cluster: LocatedCluster,
          requestAuth?: KubernetesRequestAuth,
        ): KubeGateway;
      };
      seal: Pick<SnapshotSeal, 'isSealed'>;
      prices?: PriceList;
      cacheMs?: number;
      now?: () => number;
    },
  ) {
    this.now = deps.now ?? Date.now;
  }

  /** Starts reading the clusters; failures are `undefined`, never a rejection. */
  read(
    clusters: LocatedCluster[],
    requestAuth: KubernetesRequestAuth = {},
  ): KeptSnapshotReads {
    return Promise.all(
      clusters.map(async cluster => {
        try {
          return [cluster.name, await this.readCluster(cluster, requestAuth)];
        } catch {
          return [cluster.name, undefined];
        }
      }),
    ).then(entries => new Map(entries as Array<[string, Kept[] | undefined]>));
  }

  /** The totals of the snapshots of `statefulSets`, or undefined when no cluster could be read. */
  async totals(
    reads: KeptSnapshotReads,
    statefulSets: StatefulSetPlace[],
  ): Promise<SnapshotTotals | undefined> {
    const byCluster = await reads;
    if (![...byCluster.values()].some(Boolean)) return undefined;
    const wanted = new Set(
      statefulSets.map(
        s => `${s.cluster}\n${s.namespace}\n${labelValue(s.name)}`,
      ),
    );
    let snapshots = 0;
    let bytes = 0;
    for (const [cluster, kept] of byCluster)
      for (const k of kept ?? [])
        if (wanted.has(`${cluster}\n${k.namespace}\n${k.statefulSet}`)) {
          snapshots++;
          bytes += k.bytes;
        }
    const monthlyCost = this.deps.prices?.snapshotMonthlyCost(bytes);
    return {
      snapshots,
      bytes,
      ...(monthlyCost !== undefined ? { monthlyCost } : {}),
    };
  }

  private async readCluster(
    cluster: LocatedCluster,
    requestAuth: KubernetesRequestAuth,
  ): Promise<Kept[]> {
    const gateway = this.deps.gateways.forCluster(cluster, requestAuth);
    if (gateway.actsForUser) return listKept(gateway, this.deps.seal);
    const hit = this.cached.get(cluster.name);
    const ttl = this.deps.cacheMs ?? KEPT_SNAPSHOTS_CACHE_MS;
    // A gateway replaced (the cluster's URL or credentials changed) is read anew.
    if (hit && hit.gateway === gateway && this.now() - hit.at < ttl)
      return hit.kept;
    return this.inFlight.run(cluster.name, async () => {
      const kept = await listKept(gateway, this.deps.seal);
      this.cached.set(cluster.name, { at: this.now(), gateway, kept });
      return kept;
    });
  }
}

async function listKept(
  gateway: KubeGateway,
  seal: Pick<SnapshotSeal, 'isSealed'>,
): Promise<Kept[]> {
  const snapshots = await gateway.listVolumeSnapshots(
    undefined,
    MANAGED_SNAPSHOTS,
  );
  return snapshots.flatMap(s => {
    const statefulSet = s.metadata?.labels?.[SNAPSHOT_LABELS.statefulSet];
    if (
      !statefulSet ||
      !s.metadata?.namespace ||
      s.metadata.deletionTimestamp ||
      !seal.isSealed(s)
    )
      return [];
    const size = s.status?.restoreSize;
    return [
      {
        namespace: s.metadata.namespace,
        statefulSet,
        bytes: size === undefined ? 0 : parseQuantity(String(size)) ?? 0,
      },
    ];
  });
}
