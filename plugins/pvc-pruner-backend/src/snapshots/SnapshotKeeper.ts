import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import {
  KeepSnapshotRequest,
  KeptSnapshot,
} from 'backstage-plugin-pvc-pruner-common';
import type { PriceList } from '../cost';
import { assertWithinTarget, selectedStatefulSet } from '../orphans';
import {
  clusterFailure,
  ClusterRequestError,
  type KubeGateway,
} from '../kubernetes';
import type { VolumeSnapshot } from '../kubernetes/volumeSnapshotTypes';
import type { EntityWorkloadTarget } from '../orphans';
import type { OwnershipChecks } from '../ownership';
import { SNAPSHOT_ANNOTATIONS } from './snapshotMetadata';
import { snapshotExpiry } from './snapshotExpiry';
import { keptSnapshotOf } from './keptSnapshot';
import type { SnapshotSeal } from './SnapshotSeal';
import { jobOfSnapshot, type SnapshotJobHistory } from './SnapshotExpiryTask';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * `POST /v1/snapshots/keep`: sets a snapshot's keep-until, so the expiry
 * task leaves it until then. The router has checked the caller's
 * `pvc-pruner.prune` on the entity; this checks the rest, as a prune does:
 * the StatefulSet is one the entity selects, the caller may prune it on
 * every claimant, and the snapshot is one pvc-pruner took of that
 * StatefulSet's claims, with the uid the caller saw. The date must be in
 * the future, later than the snapshot's current expiry, and at most
 * `pvcPruner.snapshots.maxKeepDays` from now.
 */
export class SnapshotKeeper {
  private readonly now: () => Date;

  constructor(
    private readonly deps: {
      gateways: {
        for(
          cluster: string,
          requestAuth?: KubernetesRequestAuth,
        ): Promise<KubeGateway>;
      };
      ownership: Pick<OwnershipChecks, 'authorizePrune'>;
      history: SnapshotJobHistory;
      seal: Pick<SnapshotSeal, 'isTakenOf'>;
      retentionDays: number;
      maxKeepDays: number;
      prices?: PriceList;
      now?: () => Date;
    },
  ) {
    this.now = deps.now ?? (() => new Date());
  }

  async keep(options: {
    request: KeepSnapshotRequest;
    target: EntityWorkloadTarget;
    credentials: BackstageCredentials;
    requestAuth?: KubernetesRequestAuth;
  }): Promise<KeptSnapshot> {
    try {
      return await this.keepIn(options);
    } catch (e) {
      throw clusterFailure(e);
    }
  }

  private async keepIn({
    request,
    target,
    credentials,
    requestAuth,
  }: {
    request: KeepSnapshotRequest;
    target: EntityWorkloadTarget;
    credentials: BackstageCredentials;
    requestAuth?: KubernetesRequestAuth;
  }): Promise<KeptSnapshot> {
    const { cluster, namespace, statefulSet, snapshot: ref } = request.snapshot;
    assertWithinTarget(target, request.snapshot);
    let gateway: KubeGateway;
    try {
      gateway = await this.deps.gateways.for(cluster, requestAuth);
    } catch (e) {
      if (e instanceof NotFoundError)
        throw new InputError(`Unknown cluster "${cluster}"`);
      throw e;
    }
    const sts = await selectedStatefulSet(
      gateway,
      { cluster, namespace, statefulSet },
      target,
    );
    await this.deps.ownership.authorizePrune({
      credentials,
      target,
      cluster,
      statefulSet: sts,
      gateway,
    });

    const what = `Snapshot ${namespace}/${ref.name} in cluster "${cluster}"`;
    const snapshot = await gateway.readVolumeSnapshot(namespace, ref.name);
    if (!snapshot || !this.deps.seal.isTakenOf(snapshot, statefulSet))
      throw new NotFoundError(
        `${what} is not one pvc-pruner took of StatefulSet ${statefulSet}'s claims`,
      );
    const uid = snapshot.metadata?.uid ?? '';
    if (uid !== ref.uid)
      throw new ConflictError(
        `${what} is another one than you saw (uid ${uid}, not ${ref.uid}): reload and try again`,
      );
    if (snapshot.metadata?.deletionTimestamp)
      throw new ConflictError(`${what} is being deleted`);

    const keepUntil = new Date(request.keepUntil);
    if (Number.isNaN(keepUntil.getTime()))
      throw new InputError(
        `keepUntil "${request.keepUntil}" is not an ISO 8601 date-time`,
      );
    const now = this.now();
    if (keepUntil.getTime() <= now.getTime())
      throw new InputError(
        `keepUntil ${keepUntil.toISOString()} is not in the future`,
      );
    const { maxKeepDays } = this.deps;
    const latest = new Date(now.getTime() + maxKeepDays * DAY_MS);
    if (keepUntil.getTime() > latest.getTime())
      throw new InputError(
        `keepUntil ${keepUntil.toISOString()} is more than ${maxKeepDays} days from now (at most ${latest.toISOString()}); the limit is pvcPruner.snapshots.maxKeepDays`,
      );
    const current = snapshotExpiry(snapshot, this.deps.retentionDays);
    if (current.expiresAt && keepUntil.getTime() <= current.expiresAt.getTime())
      throw new InputError(
        `keepUntil ${keepUntil.toISOString()} is not later than the snapshot's current expiry, ${current.expiresAt.toISOString()}`,
      );

    let kept: VolumeSnapshot;
    try {
      kept = await gateway.patchVolumeSnapshotAnnotations(
        namespace,
        ref.name,
        { uid, resourceVersion: snapshot.metadata?.resourceVersion ?? '' },
        { [SNAPSHOT_ANNOTATIONS.keepUntil]: keepUntil.toISOString() },
      );
    } catch (e) {
      if (e instanceof ClusterRequestError && e.statusCode === 404)
        throw new NotFoundError(`${what} was deleted meanwhile`);
      // 409: another write came first; 422: a uid that is not the object's (immutable).
      if (
        e instanceof ClusterRequestError &&
        (e.statusCode === 409 || e.statusCode === 422)
      )
        throw new ConflictError(
          `${what} changed since it was read: reload and try again`,
        );
      throw e;
    }
    const result = keptSnapshotOf(kept, {
      retentionDays: this.deps.retentionDays,
      prices: this.deps.prices,
      now,
    });
    await this.tellJob(cluster, kept, result, credentials);
    return result;
  }

  /** Best effort, as the snapshot is kept whether or not its job hears of it. */
  private async tellJob(
    cluster: string,
    snapshot: VolumeSnapshot,
    kept: KeptSnapshot,
    credentials: BackstageCredentials,
  ) {
    try {
      const job = await jobOfSnapshot(this.deps.history, cluster, snapshot);
      if (!job) return;
      const principal = credentials.principal as { userEntityRef?: string };
      const by = principal.userEntityRef
        ? ` by ${principal.userEntityRef}`
        : '';
      await this.deps.history.append({
        jobId: job.id,
        type: 'snapshot-kept',
        ...(kept.claimName ? { pvc: kept.claimName } : {}),
        message: `Snapshot ${kept.name} of ${
          kept.claimName || 'its claim'
        } is kept until ${kept.keepUntil}${by}`,
      });
    } catch {
      // The job may be gone (retention) or the database down: the keep stands.
    }
  }
}
