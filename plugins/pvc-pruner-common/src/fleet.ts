import { ClusterStaleness, OrphanTotals, PricingSummary } from './types';

/**
 * Wire types of `GET /v1/fleet`: what every entity the caller may read
 * could reclaim, across clusters.
 */

/** One StatefulSet with orphans, as the fleet view sums it up. @public */
export interface FleetStatefulSet {
  cluster: string;
  namespace: string;
  name: string;
  orphans: number;
  reclaimableBytes: number;
  retainedBytes: number;
  reclaimableMonthlyCost?: number;
  retainedMonthlyCost?: number;
  /** The earliest first sighting of one of its orphans: orphaned at least since then. */
  firstSeenOrphanedAt?: string;
}

/** A catalog entity whose StatefulSets left claims behind. @public */
export interface FleetEntity {
  entityRef: string;
  /** metadata.title, when it has one. */
  title?: string;
  /** The owner's entity ref (spec.owner, as the catalog resolves it), when it has one. */
  owner?: string;
  /** Only StatefulSets with orphans, sorted by cluster, namespace and name. */
  statefulSets: FleetStatefulSet[];
  totals: OrphanTotals;
  /** The earliest first sighting of one of its orphans. */
  firstSeenOrphanedAt?: string;
}

/** The entities of one owner, summed over every page. @public */
export interface FleetOwner {
  /** The owner's entity ref; absent for entities without an owner. */
  owner?: string;
  entities: number;
  totals: OrphanTotals;
  firstSeenOrphanedAt?: string;
}

/** A cluster the fleet view asked, and whether it answered. @public */
export type FleetCluster =
  | {
      cluster: string;
      ok: true;
      /** Present when the answer came from a watch cache that is disconnected. */
      staleness?: ClusterStaleness;
    }
  | {
      cluster: string;
      ok: false;
      error: { name: string; message: string; statusCode?: number };
    };

/** Response of `GET /v1/fleet`. @public */
export interface FleetResponse {
  /** Every cluster asked (all configured ones, or the one filtered by). */
  clusters: FleetCluster[];
  /** How many entities with Kubernetes annotations the caller may read, after the owner filter. */
  entitiesScanned: number;
  /** Over every page: the entities with orphans and their StatefulSets that match the filters. */
  totals: OrphanTotals & { entities: number; statefulSets: number };
  /** Per owner, over every page, ordered by owner ref (entities without one last). */
  owners: FleetOwner[];
  /** This page of entities with orphans, ordered by entity ref. */
  items: FleetEntity[];
  /** Pass as `?cursor=` for the next page. */
  nextCursor?: string;
  /**
   * StatefulSets with orphans that no catalog entity maps to. Only with the
   * `pvc-pruner.fleet.unowned.read` permission, only on the first page, and
   * never when filtering by owner.
   */
  unowned?: {
    statefulSets: FleetStatefulSet[];
    totals: OrphanTotals;
    firstSeenOrphanedAt?: string;
  };
  /** Present when `pvcPruner.pricing` is configured. */
  pricing?: PricingSummary;
}
