import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import type { V1StatefulSet } from '@kubernetes/client-node';
import type { PruneJob } from 'backstage-plugin-pvc-pruner-common';
import type { KubeGateway } from '../kubernetes';
import type { EntityWorkloadTarget, PausedStatefulSets } from '../orphans';
import type { ClaimantAtRequest } from '../ownership/OwnershipChecks';

/** What a job knows of the request that started it: in its process's memory only, never stored. */
export interface JobRequest {
  credentials: BackstageCredentials;
  /** The entity the prune goes through; none for a StatefulSet no entity claims. */
  target?: EntityWorkloadTarget;
  /** Whether the user asked for a snapshot of each claim before it is deleted. */
  snapshot?: boolean;
  /** What the job prunes the claims of: the live StatefulSet of its name unless told (a deleted one's, say). */
  subject?: SubjectGuardFactory;
  /** Claimants beyond those the StatefulSet's labels name (a deleted StatefulSet's recorded ones), authorized too, with the catalog uid each had. */
  alsoClaimedBy?: ClaimantAtRequest[];
  /** Guards of this request's own kind (a deleted StatefulSet's claimants), started with the job's others. */
  guards?: DeleteGuardFactory[];
  /** An automatic prune: the plugin started it in run `runId`, per `onBehalfOf`'s auto-prune annotation. */
  automatic?: { runId: string; onBehalfOf: string };
}

/** Watches the StatefulSet whose claims a job prunes, and says what the orphan rule judges them by. */
export interface SubjectGuard {
  /** The StatefulSet as last read or watched. */
  readonly current: V1StatefulSet;
  readonly abortReason?: string;
  confirmLive(gateway: KubeGateway): Promise<void>;
  stop(): void;
  /** How the orphan rule takes its 0 replicas, when not as `pvcPruner.pausedStatefulSets` says. */
  readonly pausedStatefulSets?: PausedStatefulSets;
}

/** Starts a job's SubjectGuard for the StatefulSet of that name. */
export interface SubjectGuardFactory {
  start(
    gateway: KubeGateway,
    namespace: string,
    name: string,
  ): Promise<SubjectGuard>;
}

/** Something a job keeps watching while it runs, that can stop it before its next delete. */
export interface DeleteGuard {
  /** Why the job must stop before its next delete, once what it guards changed. */
  readonly abortReason: string | undefined;
  /** The live read right before a delete, in the same round trip as the pod list. */
  confirmLive(gateway: KubeGateway): Promise<void>;
  stop(): void;
}

/** Starts a guard for a job, once its StatefulSet has been read. */
export interface DeleteGuardFactory {
  start(options: {
    job: PruneJob;
    gateway: KubeGateway;
    /** The StatefulSet as the job's last live read or watch event has it. */
    statefulSet: () => V1StatefulSet;
    /** Absent only for a job run without one (a test's): a guard that needs it refuses. */
    request?: JobRequest;
  }): Promise<DeleteGuard>;
}
