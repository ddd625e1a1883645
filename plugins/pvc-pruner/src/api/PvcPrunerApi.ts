import { createApiRef } from '@backstage/core-plugin-api';
import {
  ClaimKeep,
  FleetResponse,
  KeepClaimRequest,
  KeepSnapshotRequest,
  KeptSnapshot,
  LeftBehindEvidence,
  LeftBehindResponse,
  OrphansResponse,
  PruneEvent,
  PruneJob,
  PruneJobPage,
  PruneRequest,
  ReclaimRequest,
  ReleasedVolumesResponse,
  RestoreRequest,
  RestoreResponse,
  SnapshotsResponse,
  UnownedOrphansResponse,
} from 'backstage-plugin-pvc-pruner-common';

/**
 * Options for listing an entity's prune jobs, newest first.
 *
 * @public
 */
export interface ListPruneJobsRequest {
  entityRef: string;
  /** At most this many jobs (the backend allows 1–100, default 20). */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

/**
 * Options of {@link PvcPrunerApi.getOrphans}.
 *
 * @public
 */
export interface GetOrphansOptions {
  /**
   * The cluster the entity names in its `backstage.io/kubernetes-cluster`
   * annotation, if it names one: the user's tokens for client-side
   * providers are asked for, and sent, for that cluster only. An entity
   * that names none maps to every cluster, and so do its tokens.
   */
  cluster?: string;
}

/**
 * Filters and page of the fleet view (`GET /v1/fleet`).
 *
 * @public
 */
export interface FleetRequest {
  /** Only this configured cluster. */
  cluster?: string;
  /** Only StatefulSets in this namespace. */
  namespace?: string;
  /** An owner's entity ref, e.g. `group:default/checkout`. */
  owner?: string;
  /** Entities per page (the backend allows 1–500, default 100). */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

/**
 * A StatefulSet that no catalog entity claims (`GET /v1/unowned/orphans`).
 *
 * @public
 */
export interface UnownedOrphansRequest {
  /** A configured cluster's name. */
  cluster: string;
  /** The StatefulSet's namespace. */
  namespace: string;
  /** The StatefulSet's name. */
  statefulSet: string;
  /** The claims a deleted StatefulSet of that name left, known by this evidence, instead of a live one's. */
  leftBy?: LeftBehindEvidence;
}

/**
 * A claim whose keep through the card ends (`DELETE /v1/claim-keeps/{uid}`).
 *
 * @public
 */
export interface UnkeepClaimRequest {
  /** The claim's uid. */
  uid: string;
  /** The entity whose card kept it. */
  entityRef: string;
  /** The claim's cluster. */
  cluster: string;
}

/**
 * The pvc-pruner backend, as the frontend sees it.
 *
 * @public
 */
export interface PvcPrunerApi {
  /** The orphaned claims of an entity's StatefulSets, per cluster. */
  getOrphans(
    entityRef: string,
    options?: GetOrphansOptions,
  ): Promise<OrphansResponse>;

  /**
   * The claims that deleted StatefulSets left behind, of which the entity is
   * a claimant, per cluster (groups the user may not read are only counted).
   */
  getLeftBehind(
    entityRef: string,
    options?: GetOrphansOptions,
  ): Promise<LeftBehindResponse>;

  /** One page of what every entity the user may read could reclaim, across clusters. */
  getFleet(request?: FleetRequest): Promise<FleetResponse>;

  /**
   * The orphaned and kept claims of one StatefulSet that no catalog entity
   * claims, for the fleet page's Unowned section (needs
   * `pvc-pruner.fleet.unowned.read`). A 403 names the entities that claim it
   * after all.
   */
  getUnownedOrphans(
    request: UnownedOrphansRequest,
  ): Promise<UnownedOrphansResponse>;

  /**
   * Starts a prune (or a dry run) of exactly the given claims. Resolves with
   * the job id once the backend accepted it (202); a 409 names who holds the
   * StatefulSet's lock, a 403 the claimant the user may not prune. Without
   * `entityRef`, it prunes a StatefulSet that no catalog entity claims (needs
   * `pvc-pruner.unowned.prune`).
   */
  startPrune(request: PruneRequest): Promise<{ id: string }>;

  /**
   * The VolumeSnapshots pvc-pruner kept of the entity's StatefulSets'
   * claims, read from each cluster (a snapshot deleted by hand is not listed).
   */
  listSnapshots(
    entityRef: string,
    options?: GetOrphansOptions,
  ): Promise<SnapshotsResponse>;

  /**
   * Re-creates a pruned claim from one of its snapshots, under its original
   * name. A 409 says a claim of that name exists or the snapshot is not
   * ready; a 403 names the claimant the user may not prune.
   */
  restoreSnapshot(request: RestoreRequest): Promise<RestoreResponse>;

  /** Keeps a snapshot until a later date; a 400 names the furthest allowed. */
  keepSnapshot(request: KeepSnapshotRequest): Promise<KeptSnapshot>;

  /**
   * The Released volumes whose claim is gone: those traced to `entityRef`, or
   * without it every one the user may read (the fleet page), each saying
   * whether the user may reclaim it.
   */
  listReleasedVolumes(entityRef?: string): Promise<ReleasedVolumesResponse>;

  /**
   * Starts reclaiming (or a dry run of reclaiming) Released volumes: their
   * reclaim policy is set to Delete, and their provisioner deletes the disk.
   * A 409 says a volume changed since it was listed; a 403 names the entity
   * the user may not reclaim for.
   */
  startReclaim(request: ReclaimRequest): Promise<{ id: string }>;

  /**
   * Keeps an orphaned claim from automatic pruning, with a reason and an
   * optional end date (needs `pvc-pruner.prune` on the entity). A 409 says an
   * automatic prune is deleting it right now.
   */
  keepClaim(request: KeepClaimRequest): Promise<ClaimKeep>;

  /** Ends the card's keep of a claim; its keep annotation, if any, stays. */
  unkeepClaim(request: UnkeepClaimRequest): Promise<void>;

  /** One job, with its summary once it finished. */
  getJob(jobId: string): Promise<PruneJob>;

  /** The entity's prune jobs, newest first. */
  listJobs(request: ListPruneJobsRequest): Promise<PruneJobPage>;

  /**
   * Reads a job's event stream over the fetch API (so the user's token goes
   * along), calling `onEvent` for each event with a `seq` above `after`, in
   * order. Resolves after the `job-finished` event, or when `signal` aborts.
   * Rejects with a `ResponseError` when the backend refuses the stream.
   */
  streamJobEvents(
    jobId: string,
    after: number,
    onEvent: (event: PruneEvent) => void,
    signal?: AbortSignal,
  ): Promise<void>;
}

/**
 * The API reference of {@link PvcPrunerApi}.
 *
 * @public
 */
export const pvcPrunerApiRef = createApiRef<PvcPrunerApi>({
  id: 'plugin.pvc-pruner.service',
});
