import type {
  BackstageCredentials,
  BackstageUserPrincipal,
  LoggerService,
} from '@backstage/backend-plugin-api';
import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import type {
  RestoreRequest,
  RestoreResponse,
} from 'backstage-plugin-pvc-pruner-common';
import {
  clusterFailure,
  ClusterRequestError,
  KubeGateway,
  KubeGateways,
  VolumeSnapshot,
} from '../kubernetes';
import {
  assertWithinTarget,
  EntityWorkloadTarget,
  runningOrdinals,
  selectedStatefulSet,
} from '../orphans';
import type { OwnershipChecks } from '../ownership';
import type { PruneJobStore } from '../database';
import type { JobEvents } from '../jobs';
import { boundContentProblem } from './snapshotContent';
import { jobOfSnapshot } from './SnapshotExpiryTask';
import type { SnapshotSeal } from './SnapshotSeal';
import { SNAPSHOT_ANNOTATIONS, SNAPSHOT_LABELS } from './snapshotMetadata';
import { notReadyReason, restorePlan } from './restorePlan';

/** The gateway calls a restore makes. */
export type RestoreCalls = Pick<
  KubeGateway,
  | 'listStatefulSets'
  | 'readStatefulSet'
  | 'readVolumeSnapshot'
  | 'readVolumeSnapshotContent'
  | 'readClaim'
  | 'createClaim'
  | 'patchVolumeSnapshotAnnotations'
>;

/** What a restore did: the answer, and the job whose history records it (when one does). */
export interface RestoreResult {
  response: RestoreResponse;
  jobId?: string;
}

export interface SnapshotRestorerDeps {
  gateways: Pick<KubeGateways, 'for'>;
  /** Authorizes the restore as a prune: on every claimant of the StatefulSet, and its namespace's binding. */
  ownership: Pick<OwnershipChecks, 'authorizePrune'>;
  store: Pick<PruneJobStore, 'getJob'>;
  events: Pick<JobEvents, 'append'>;
  seal: Pick<SnapshotSeal, 'isTakenOf'>;
  logger?: LoggerService;
}

/**
 * Re-creates a claim pvc-pruner deleted, from the VolumeSnapshot it took of
 * it first (`POST /v1/restores`). The StatefulSet must be one the entity
 * selects, the user must be allowed to prune it (every claimant), and the
 * snapshot must be pvc-pruner's of this StatefulSet, the one the caller saw
 * (its uid), ready, bound to a content that points back at it, and say a
 * claim of this StatefulSet (see {@link restorePlan}). A claim of that name
 * must not exist. The claim is created with the snapshot as its
 * `dataSource`, and the StatefulSet mounts it at its next scale-up past the
 * claim's ordinal. The router checks the permission on the entity first.
 */
export class SnapshotRestorer {
  constructor(private readonly deps: SnapshotRestorerDeps) {}

  async restore(options: {
    request: RestoreRequest;
    target: EntityWorkloadTarget;
    credentials: BackstageCredentials<BackstageUserPrincipal>;
    requestAuth?: KubernetesRequestAuth;
  }): Promise<RestoreResult> {
    const { request, target, credentials } = options;
    assertWithinTarget(target, request);
    let gateway: KubeGateway;
    try {
      gateway = await this.deps.gateways.for(
        request.cluster,
        options.requestAuth ?? {},
      );
    } catch (e) {
      if (e instanceof NotFoundError)
        throw new InputError(`Unknown cluster "${request.cluster}"`);
      throw e;
    }
    try {
      return await this.restoreWith(gateway, request, target, credentials);
    } catch (e) {
      throw clusterFailure(e);
    }
  }

  private async restoreWith(
    gateway: KubeGateway,
    request: RestoreRequest,
    target: EntityWorkloadTarget,
    credentials: BackstageCredentials<BackstageUserPrincipal>,
  ): Promise<RestoreResult> {
    const { cluster, namespace } = request;
    const statefulSet = await selectedStatefulSet(gateway, request, target);
    await this.deps.ownership.authorizePrune({
      credentials,
      target,
      cluster,
      statefulSet,
      gateway,
    });
    const stsName = request.statefulSet;
    const name = request.snapshot.name;
    const snapshot = await gateway.readVolumeSnapshot(namespace, name);
    if (!snapshot || !this.deps.seal.isTakenOf(snapshot, stsName))
      throw new NotFoundError(
        `No VolumeSnapshot ${namespace}/${name} that pvc-pruner took of a claim of StatefulSet ${stsName} in cluster "${cluster}"`,
      );
    const uid = snapshot.metadata?.uid;
    if (uid !== request.snapshot.uid)
      throw new ConflictError(
        `VolumeSnapshot ${namespace}/${name} is another one now (uid ${
          uid ?? 'none'
        }, not ${request.snapshot.uid}): read the snapshots again`,
      );
    const notReady = notReadyReason(snapshot);
    if (notReady) throw new ConflictError(notReady);
    const contentName = snapshot.status!.boundVolumeSnapshotContentName!;
    const content = await gateway.readVolumeSnapshotContent(contentName);
    const unbound = boundContentProblem(
      { namespace, name, uid: uid! },
      contentName,
      content,
    );
    if (unbound) throw new ConflictError(unbound);
    const restoredBy = credentials.principal.userEntityRef;
    const plan = restorePlan(
      { ...snapshot, metadata: { ...snapshot.metadata, namespace } },
      statefulSet,
      restoredBy,
    );
    if (!plan.ok) throw new ConflictError(plan.reason);
    const taken = `A claim named ${plan.claimName} exists in ${namespace}: a restore never replaces a claim (delete or rename it first, if it is not needed)`;
    if (await gateway.readClaim(namespace, plan.claimName))
      throw new ConflictError(taken);
    await this.markRestoring(gateway, snapshot);
    let created;
    try {
      created = await gateway.createClaim(namespace, plan.claim);
    } catch (e) {
      // Created in between (the StatefulSet controller, or someone else).
      if (e instanceof ClusterRequestError && e.statusCode === 409)
        throw new ConflictError(taken);
      throw e;
    }
    const { start, end } = runningOrdinals(statefulSet);
    const reattachesAtReplicas = plan.ordinal - start + 1;
    const running = plan.ordinal < end;
    const message = [
      running
        ? `${stsName} runs ordinal ${plan.ordinal} already: the StatefulSet controller mounts ${plan.claimName} in its pod once the volume is provisioned from the snapshot`
        : `scale ${stsName} to ${reattachesAtReplicas} replicas to bring it back`,
      ...(plan.labelsNotKept !== undefined
        ? [
            `the claim's labels were not kept in the snapshot (${plan.labelsNotKept})`,
          ]
        : []),
    ].join('; ');
    const jobId = await this.recordInJob(cluster, snapshot, {
      claimName: plan.claimName,
      message: `Claim ${plan.claimName} restored from VolumeSnapshot ${name} by ${restoredBy}; ${message}`,
    });
    return {
      response: {
        claim: {
          name: plan.claimName,
          namespace,
          uid: created.metadata?.uid ?? '',
        },
        snapshot: name,
        statefulSet: stsName,
        requested: plan.requested,
        reattachesAtReplicas,
        message,
      },
      ...(jobId ? { jobId } : {}),
    };
  }

  /**
   * Changes the snapshot (its restored-at annotation) with the uid and
   * resourceVersion read as preconditions, before the claim is created: an
   * expiry run that listed it earlier deletes with the old resourceVersion,
   * and fails, rather than delete the snapshot a claim is being restored from.
   */
  private async markRestoring(gateway: KubeGateway, snapshot: VolumeSnapshot) {
    const { namespace = '', name = '', uid = '' } = snapshot.metadata ?? {};
    try {
      await gateway.patchVolumeSnapshotAnnotations(
        namespace,
        name,
        { uid, resourceVersion: snapshot.metadata?.resourceVersion ?? '' },
        { [SNAPSHOT_ANNOTATIONS.restoredAt]: new Date().toISOString() },
      );
    } catch (e) {
      if (
        e instanceof ClusterRequestError &&
        [404, 409, 422].includes(e.statusCode ?? 0)
      )
        throw new ConflictError(
          `VolumeSnapshot ${namespace}/${name} changed or was deleted while it was being restored from: read the snapshots again`,
        );
      throw e;
    }
  }

  /**
   * A `snapshot-restored` event in the history of the job that took the
   * snapshot, when its label names a job of this StatefulSet. Best effort:
   * the claim exists whatever becomes of the record.
   */
  private async recordInJob(
    cluster: string,
    snapshot: VolumeSnapshot,
    event: { claimName: string; message: string },
  ): Promise<string | undefined> {
    const jobId = snapshot.metadata?.labels?.[SNAPSHOT_LABELS.job];
    try {
      const job = await jobOfSnapshot(this.deps.store, cluster, snapshot);
      if (!job) return undefined;
      await this.deps.events.append({
        jobId: job.id,
        type: 'snapshot-restored',
        pvc: event.claimName,
        message: event.message,
      });
      return job.id;
    } catch (e) {
      this.deps.logger?.warn(
        `pvc-pruner: the restore of ${event.claimName} was not recorded in job ${jobId}: ${e}`,
      );
      return undefined;
    }
  }
}
