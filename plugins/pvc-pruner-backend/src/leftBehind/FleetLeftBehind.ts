import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import type {
  FleetLeftBehind as FleetLeftBehindWire,
  OrphanTotals,
} from 'backstage-plugin-pvc-pruner-common';
import type {
  ClusterCache,
  KubeGateway,
  KubeGateways,
  LocatedCluster,
} from '../kubernetes';
import type { ClaimLineageStore } from '../lineage';
import { sumTotals, totalsOf } from '../orphans/OrphanAnnotator';
import {
  type FoundGroup,
  isUnowned,
  verifiedClaimants,
} from './leftBehindGroups';
import type { LeftBehindAccess } from './LeftBehindAccess';
import type { LeftBehindFinder } from './LeftBehindFinder';

/** Namespaces of a cluster with lineage looked at: those where StatefulSets were seen most recently. */
const MAX_NAMESPACES = 50;
/** Groups of a cluster read (and so priced) at most. */
const MAX_GROUPS_PER_CLUSTER = 1000;
/** Rows listed per entity (and in Unowned); the totals count them all. */
const MAX_ROWS = 100;

type Row = FleetLeftBehindWire['statefulSets'][number];

interface ClusterGroup {
  cluster: string;
  gateway: KubeGateway;
  cache?: ClusterCache;
  group: FoundGroup;
}

/** A group's row on the fleet page, with its key across the fleet (to count it once). */
export interface KeyedRow {
  key: string;
  row: Row;
}

function keyedRow(cluster: string, group: FoundGroup): KeyedRow {
  const { report } = group;
  return {
    key: `${cluster}\n${group.namespace}/${group.statefulSet.name}\n${
      group.statefulSet.uid ?? group.evidence
    }`,
    row: {
      cluster,
      namespace: group.namespace,
      name: group.statefulSet.name,
      evidence: group.evidence,
      ...totalsOf(report),
    },
  };
}

/** The rows listed and their totals, each key counted once. */
export function fleetLeftBehind(
  rows: KeyedRow[],
  priced: boolean,
): FleetLeftBehindWire {
  return {
    statefulSets: rows.slice(0, MAX_ROWS).map(r => r.row),
    totals: totalsOnce(rows, priced),
  };
}

/** The totals of rows, a group listed under several entities counted once. */
export function totalsOnce(rows: KeyedRow[], priced: boolean): OrphanTotals {
  const once = new Map(rows.map(r => [r.key, r.row]));
  return sumTotals([...once.values()], priced);
}

/**
 * The claims deleted StatefulSets left, for the fleet page: read in the
 * namespaces where claims have lineage, listed under each claimant the
 * caller may read when they may read every claimant (LeftBehindAccess), and
 * those no entity claims, apart, for the Unowned section.
 */
export class FleetLeftBehindReader {
  constructor(
    private readonly deps: {
      gateways: KubeGateways;
      lineage: Pick<ClaimLineageStore, 'namespacesWithLineage'>;
      finder: Pick<
        LeftBehindFinder,
        'groupsIn' | 'cacheOf' | 'withVolumesAndCosts'
      >;
      access: Pick<LeftBehindAccess, 'readable'>;
    },
  ) {}

  async read(options: {
    clusters: LocatedCluster[];
    requestAuth: KubernetesRequestAuth;
    credentials: BackstageCredentials;
    /** The entities the caller may read (orphans.read). */
    readable: ReadonlySet<string>;
    namespace?: string;
  }): Promise<{ byEntity: Map<string, KeyedRow[]>; unclaimed: KeyedRow[] }> {
    const found = (
      await Promise.all(options.clusters.map(d => this.groupsOf(d, options)))
    ).flat();
    // A group no verified claimant claims is the platform's (Unowned), whatever refs were recorded for it.
    const claimed = found.filter(({ group }) => !isUnowned(group));
    const verdicts = await this.deps.access.readable(
      options.credentials,
      claimed.map(c => c.group),
      options.readable,
    );
    // Volumes and costs are read only for the groups listed: unclaimed ones, and those the caller may read.
    const listed = new Set([
      ...claimed
        .filter(
          ({ group }, i) =>
            !verdicts[i].crowded &&
            verdicts[i].refused.length === 0 &&
            verifiedClaimants(group).some(ref => options.readable.has(ref)),
        )
        .map(c => c.group),
      ...found.filter(f => isUnowned(f.group)).map(f => f.group),
    ]);
    const priced = await this.withVolumesAndCosts(
      found.filter(f => listed.has(f.group)),
    );
    const byEntity = new Map<string, KeyedRow[]>();
    const unclaimed: KeyedRow[] = [];
    for (const { cluster, group } of priced) {
      const row = keyedRow(cluster, group);
      if (isUnowned(group)) unclaimed.push(row);
      for (const ref of verifiedClaimants(group)) {
        if (!options.readable.has(ref)) continue;
        const list = byEntity.get(ref) ?? [];
        list.push(row);
        byEntity.set(ref, list);
      }
    }
    return { byEntity, unclaimed };
  }

  /** A cluster's groups, without volumes; none when the cluster fails (the orphan scan reports it). */
  private async groupsOf(
    details: LocatedCluster,
    options: { requestAuth: KubernetesRequestAuth; namespace?: string },
  ): Promise<ClusterGroup[]> {
    try {
      const gateway = this.deps.gateways.forCluster(
        details,
        options.requestAuth,
      );
      const namespaces = await this.deps.lineage.namespacesWithLineage(
        details.name,
        MAX_NAMESPACES,
        options.namespace || undefined,
      );
      // As the fleet's scan: a cluster the catalog locator found gets no cache started.
      const cache = await this.deps.finder.cacheOf(details, gateway, {
        start: details.locatorType !== 'catalog',
      });
      const groups = await this.deps.finder.groupsIn(
        gateway,
        namespaces,
        cache,
      );
      return groups
        .slice(0, MAX_GROUPS_PER_CLUSTER)
        .map(group => ({ cluster: details.name, gateway, cache, group }));
    } catch {
      return [];
    }
  }

  /** The groups with volumes and costs, each cluster in one read; a cluster that fails lists none. */
  private async withVolumesAndCosts(
    groups: ClusterGroup[],
  ): Promise<ClusterGroup[]> {
    const byCluster = new Map<string, ClusterGroup[]>();
    for (const g of groups)
      byCluster.set(g.cluster, [...(byCluster.get(g.cluster) ?? []), g]);
    const priced = await Promise.all(
      [...byCluster.values()].map(async list => {
        const [{ gateway, cache }] = list;
        try {
          const read = await this.deps.finder.withVolumesAndCosts(
            gateway,
            list.map(g => g.group),
            cache,
          );
          return read.map((group, i) => ({ ...list[i], group }));
        } catch {
          return [];
        }
      }),
    );
    return priced.flat();
  }
}
