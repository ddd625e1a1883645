import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import type {
  FleetLeftBehind as FleetLeftBehindWire,
  OrphanTotals,
} from 'backstage-plugin-pvc-pruner-common';
import type { KubeGateways, LocatedCluster } from '../kubernetes';
import type { ClaimLineageStore } from '../lineage';
import { sumTotals, totalsOf } from '../orphans/OrphanAnnotator';
import type { FoundGroup } from './leftBehindGroups';
import type { LeftBehindAccess } from './LeftBehindAccess';
import type { LeftBehindFinder } from './LeftBehindFinder';

/** Namespaces of a cluster with lineage looked at: those where StatefulSets were seen most recently. */
const MAX_NAMESPACES = 50;
/** Rows listed per entity (and in Unowned); the totals count them all. */
const MAX_ROWS = 100;

type Row = FleetLeftBehindWire['statefulSets'][number];

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
      finder: Pick<LeftBehindFinder, 'groupsIn' | 'cacheOf'>;
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
    const found = await Promise.all(
      options.clusters.map(async details => {
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
          return groups.map(group => ({ cluster: details.name, group }));
        } catch {
          // The cluster's failure is the orphan scan's to report.
          return [];
        }
      }),
    );
    const all = found.flat();
    const claimed = all.filter(({ group }) => group.claimants.length > 0);
    const verdicts = await this.deps.access.readable(
      options.credentials,
      claimed.map(c => c.group),
      options.readable,
    );
    const byEntity = new Map<string, KeyedRow[]>();
    claimed.forEach(({ cluster, group }, i) => {
      const verdict = verdicts[i];
      if (verdict.crowded || verdict.refused.length > 0) return;
      const row = keyedRow(cluster, group);
      for (const ref of group.claimants) {
        if (!options.readable.has(ref)) continue;
        const list = byEntity.get(ref) ?? [];
        list.push(row);
        byEntity.set(ref, list);
      }
    });
    const unclaimed = all
      .filter(({ group }) => group.claimants.length === 0)
      .map(({ cluster, group }) => keyedRow(cluster, group));
    return { byEntity, unclaimed };
  }
}
