import type {
  AuditorService,
  LoggerService,
  SchedulerService,
} from '@backstage/backend-plugin-api';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { PruneEvent, PruneJob } from 'backstage-plugin-pvc-pruner-common';
import {
  ClusterRequestError,
  type KubeGateway,
  type LocatedCluster,
} from '../kubernetes';
import type { VolumeSnapshot } from '../kubernetes/volumeSnapshotTypes';
import {
  labelValue,
  MANAGED_BY,
  SNAPSHOT_ANNOTATIONS,
  SNAPSHOT_LABELS,
  sourceClaimOf,
} from './snapshotMetadata';
import { snapshotExpiry } from './snapshotExpiry';
import type { SnapshotSeal } from './SnapshotSeal';

export const SNAPSHOT_EXPIRY_TASK_ID = 'pvc-pruner-snapshot-expiry';

/** Deletions per cluster per run: a backlog (the task was off for months) is worked off over several runs, never in one burst. */
export const MAX_DELETIONS_PER_CLUSTER = 500;

/** The label selector of every snapshot pvc-pruner took. */
export const MANAGED_SNAPSHOTS = `${SNAPSHOT_LABELS.managedBy}=${MANAGED_BY}`;

/** What one run did in one cluster. */
export interface ClusterExpiry {
  cluster: string;
  /** Deleted, as `namespace/name`. */
  deleted: string[];
  /** Expired but kept, as `namespace/name`, with why. */
  kept: Array<{ snapshot: string; reason: string }>;
  /** Expired, deletion tried and refused (a changed uid, a forbidden delete, …). */
  failed: Array<{ snapshot: string; error: string }>;
  /** Set when the cap stopped the run: the rest wait for the next one. */
  capped?: boolean;
  /** Set when the cluster could not be read at all, or was not reachable with the plugin's own credentials. */
  skipped?: string;
}

/** How a snapshot's own job is found and told, best effort. */
export interface SnapshotJobHistory {
  getJob(id: string): Promise<PruneJob | undefined>;
  append(event: Omit<PruneEvent, 'seq' | 'at'>): Promise<unknown>;
}

/** Prune job ids are UUIDs; a label that is not one names no job. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The job that took a snapshot, when its label names one of the same
 * cluster, namespace and StatefulSet: whoever may label snapshots in a
 * namespace must not write into the history of another StatefulSet's job.
 */
export async function jobOfSnapshot(
  history: Pick<SnapshotJobHistory, 'getJob'>,
  cluster: string,
  snapshot: VolumeSnapshot,
): Promise<PruneJob | undefined> {
  const labels = snapshot.metadata?.labels ?? {};
  const id = labels[SNAPSHOT_LABELS.job];
  if (!id || !UUID.test(id)) return undefined;
  const job = await history.getJob(id);
  return job &&
    job.cluster === cluster &&
    job.namespace === snapshot.metadata?.namespace &&
    labels[SNAPSHOT_LABELS.statefulSet] === labelValue(job.statefulSet)
    ? job
    : undefined;
}

const nameOf = (s: VolumeSnapshot) =>
  `${s.metadata?.namespace}/${s.metadata?.name}`;

/** Whether a claim is being restored from the snapshot: not yet Bound, with a data source naming it. */
function restoresFrom(
  claim: V1PersistentVolumeClaim,
  snapshot: string,
): boolean {
  if (claim.status?.phase === 'Bound') return false;
  return [claim.spec?.dataSource, claim.spec?.dataSourceRef].some(
    source =>
      source?.kind === 'VolumeSnapshot' &&
      source.name === snapshot &&
      (source.apiGroup ?? 'snapshot.storage.k8s.io') ===
        'snapshot.storage.k8s.io',
  );
}

/**
 * Deletes pvc-pruner's snapshots once their undo window has passed
 * (`snapshotExpiry`: creation plus `pvcPruner.snapshots.retentionDays`, or
 * a later keep-until). Hourly upkeep on Backstage's scheduler with
 * `scope: 'global'`, as RetentionCleaner. Only clusters the plugin reaches
 * with its own credentials are read: a cluster whose provider needs a
 * user's token (google, oidc, aks) has none in a background task, and is
 * logged once. Each cluster is listed cluster-wide by the managed-by label;
 * an expired snapshot is deleted with its uid as a precondition, unless its
 * keep-until is unreadable, it has no creationTimestamp, or a claim not yet
 * Bound is being restored from it. At most {@link MAX_DELETIONS_PER_CLUSTER}
 * per cluster per run. One cluster failing does not stop the others. Each
 * deletion is audited and told to the history of the job that took it.
 */
export class SnapshotExpiryTask {
  private readonly loggedUserClusters = new Set<string>();
  /** The last failure logged per cluster: the same one again, each hour, is not logged again. */
  private readonly loggedFailures = new Map<string, string>();
  private readonly now: () => Date;
  private readonly maxDeletions: number;

  constructor(
    private readonly deps: {
      clusters: {
        list(): Promise<LocatedCluster[]>;
        forCluster(cluster: LocatedCluster): KubeGateway;
      };
      /** Whether a cluster's provider authenticates each user (google, oidc, aks). */
      clientSide: (cluster: LocatedCluster) => boolean;
      history: SnapshotJobHistory;
      seal: Pick<SnapshotSeal, 'isSealed'>;
      auditor: AuditorService;
      logger: LoggerService;
      retentionDays: number;
      /** The clock expiry is judged by (tests move it). */
      now?: () => Date;
      maxDeletionsPerCluster?: number;
    },
  ) {
    this.now = deps.now ?? (() => new Date());
    this.maxDeletions =
      deps.maxDeletionsPerCluster ?? MAX_DELETIONS_PER_CLUSTER;
  }

  /** Schedules the expiry hourly, the first run a few minutes after start. */
  static async schedule(
    scheduler: SchedulerService,
    deps: ConstructorParameters<typeof SnapshotExpiryTask>[0],
  ): Promise<SnapshotExpiryTask> {
    const expiry = new SnapshotExpiryTask(deps);
    await scheduler.scheduleTask({
      id: SNAPSHOT_EXPIRY_TASK_ID,
      scope: 'global',
      frequency: { hours: 1 },
      timeout: { minutes: 30 },
      initialDelay: { minutes: 5 },
      fn: async () => {
        await expiry.run();
      },
    });
    return expiry;
  }

  /** One pass over every cluster, the clusters in parallel. */
  async run(): Promise<ClusterExpiry[]> {
    let clusters: LocatedCluster[];
    try {
      clusters = await this.deps.clusters.list();
    } catch (e) {
      this.deps.logger.warn(
        `pvc-pruner: snapshot expiry could not list the clusters: ${e}`,
      );
      return [];
    }
    return Promise.all(clusters.map(c => this.runCluster(c)));
  }

  private async runCluster(cluster: LocatedCluster): Promise<ClusterExpiry> {
    const result: ClusterExpiry = {
      cluster: cluster.name,
      deleted: [],
      kept: [],
      failed: [],
    };
    const { logger } = this.deps;
    if (this.deps.clientSide(cluster)) {
      if (!this.loggedUserClusters.has(cluster.name)) {
        this.loggedUserClusters.add(cluster.name);
        logger.info(
          `pvc-pruner: snapshot expiry skips cluster "${cluster.name}": its auth provider needs a signed-in user's token, which a background task does not have; delete its expired snapshots by hand (label ${MANAGED_SNAPSHOTS}, and only those with a ${SNAPSHOT_ANNOTATIONS.seal} annotation: anyone may set the label)`,
        );
      }
      return { ...result, skipped: 'needs a user token' };
    }
    try {
      const gateway = this.deps.clusters.forCluster(cluster);
      const snapshots = await gateway.listVolumeSnapshots(
        undefined,
        MANAGED_SNAPSHOTS,
      );
      await this.expire(gateway, snapshots, result);
    } catch (e) {
      // A cluster without the snapshot API, or without the snapshots RBAC (snapshots never
      // enabled there), answers the same each hour: said once, until it changes.
      const failure = String(e);
      if (this.loggedFailures.get(cluster.name) !== failure)
        logger.warn(
          `pvc-pruner: snapshot expiry could not read cluster "${cluster.name}": ${failure}`,
        );
      this.loggedFailures.set(cluster.name, failure);
      return { ...result, skipped: failure };
    }
    this.loggedFailures.delete(cluster.name);
    if (result.deleted.length > 0 || result.failed.length > 0)
      logger.info(
        `pvc-pruner: snapshot expiry deleted ${
          result.deleted.length
        } expired snapshots in cluster "${cluster.name}"${
          result.failed.length ? `, ${result.failed.length} failed` : ''
        }`,
      );
    return result;
  }

  private async expire(
    gateway: KubeGateway,
    snapshots: VolumeSnapshot[],
    result: ClusterExpiry,
  ) {
    const now = this.now();
    const claimsIn = new Map<string, Promise<V1PersistentVolumeClaim[]>>();
    const claims = (namespace: string) => {
      let listed = claimsIn.get(namespace);
      if (!listed) {
        listed = gateway.listClaims(namespace);
        claimsIn.set(namespace, listed);
      }
      return listed;
    };
    for (const snapshot of snapshots) {
      const namespace = snapshot.metadata?.namespace;
      const name = snapshot.metadata?.name;
      const uid = snapshot.metadata?.uid;
      if (!namespace || !name || !uid || snapshot.metadata?.deletionTimestamp)
        continue;
      // Labelled as pvc-pruner's by someone else, or its labels edited since: not ours to delete.
      if (!this.deps.seal.isSealed(snapshot)) {
        result.kept.push({
          snapshot: nameOf(snapshot),
          reason: `it has no valid ${SNAPSHOT_ANNOTATIONS.seal} annotation: pvc-pruner did not take it, or its labels were changed since`,
        });
        continue;
      }
      const expiry = snapshotExpiry(snapshot, this.deps.retentionDays);
      if (expiry.keepUntilUnreadable !== undefined) {
        result.kept.push({
          snapshot: nameOf(snapshot),
          reason: `its ${SNAPSHOT_ANNOTATIONS.keepUntil} annotation "${expiry.keepUntilUnreadable}" is not an ISO 8601 date`,
        });
        continue;
      }
      if (!expiry.expiresAt) {
        result.kept.push({
          snapshot: nameOf(snapshot),
          reason: 'it has no creationTimestamp',
        });
        continue;
      }
      if (expiry.expiresAt.getTime() > now.getTime()) continue;
      // A claim list that fails keeps the snapshot: whether a restore reads it is unknown.
      const restoring = await claims(namespace).then(
        listed => listed.some(c => restoresFrom(c, name)),
        () => undefined,
      );
      if (restoring !== false) {
        result.kept.push({
          snapshot: nameOf(snapshot),
          reason:
            restoring === undefined
              ? `the claims of ${namespace} could not be read, so a restore from it could not be ruled out`
              : 'a claim is being restored from it',
        });
        continue;
      }
      if (result.deleted.length + result.failed.length >= this.maxDeletions) {
        result.capped = true;
        this.deps.logger.info(
          `pvc-pruner: snapshot expiry stopped at ${this.maxDeletions} deletions in cluster "${gateway.cluster}" for this run; the other expired snapshots are deleted in the next runs`,
        );
        return;
      }
      await this.deleteOne(gateway, snapshot, expiry.expiresAt, result);
    }
  }

  private async deleteOne(
    gateway: KubeGateway,
    snapshot: VolumeSnapshot,
    expiredAt: Date,
    result: ClusterExpiry,
  ) {
    const namespace = snapshot.metadata!.namespace!;
    const name = snapshot.metadata!.name!;
    const uid = snapshot.metadata!.uid!;
    const labels = snapshot.metadata?.labels ?? {};
    const claim = sourceClaimOf(snapshot);
    const audit = await this.deps.auditor.createEvent({
      eventId: 'snapshot-expired',
      severityLevel: 'medium',
      meta: {
        cluster: gateway.cluster,
        namespace,
        snapshot: name,
        uid,
        claim,
        statefulSet: labels[SNAPSHOT_LABELS.statefulSet] ?? '',
        expiredAt: expiredAt.toISOString(),
      },
    });
    try {
      // The resourceVersion as listed: a keep or a restore since then changed it, and the delete fails.
      await gateway.deleteVolumeSnapshot(namespace, name, {
        uid,
        resourceVersion: snapshot.metadata?.resourceVersion,
      });
    } catch (e) {
      // Deleted meanwhile (by hand, or another replica's late run): nothing left to expire.
      if (e instanceof ClusterRequestError && e.statusCode === 404) {
        await audit.success({ meta: { alreadyGone: true } });
        return;
      }
      await audit.fail({ error: e as Error });
      result.failed.push({
        snapshot: `${namespace}/${name}`,
        error: (e as Error).message,
      });
      this.deps.logger.warn(
        `pvc-pruner: snapshot expiry could not delete ${namespace}/${name} in cluster "${gateway.cluster}": ${e}`,
      );
      return;
    }
    await audit.success();
    result.deleted.push(`${namespace}/${name}`);
    await this.tellJob(gateway.cluster, snapshot, claim, expiredAt);
  }

  /** Best effort: the job may have been deleted by retention, or the database may be down. */
  private async tellJob(
    cluster: string,
    snapshot: VolumeSnapshot,
    claim: string,
    expiredAt: Date,
  ) {
    try {
      const job = await jobOfSnapshot(this.deps.history, cluster, snapshot);
      if (!job) return;
      await this.deps.history.append({
        jobId: job.id,
        type: 'snapshot-expired',
        ...(claim ? { pvc: claim } : {}),
        message: `Snapshot ${snapshot.metadata?.name} of ${
          claim || 'its claim'
        } expired at ${expiredAt.toISOString()} and was deleted`,
      });
    } catch (e) {
      this.deps.logger.warn(
        `pvc-pruner: could not record the expiry of snapshot ${nameOf(
          snapshot,
        )} in its job's history: ${e}`,
      );
    }
  }
}
