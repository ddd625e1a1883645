import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { PruneJob, PvcOutcome } from 'backstage-plugin-pvc-pruner-common';
import type { KubeGateway } from '../kubernetes';
import type { Confirmed } from './ClaimRecheck';
import type { JobRequest } from './DeleteGuard';

/**
 * A step's own live read of what it prepared, run in the same round trip as
 * the claim's last check right before its delete: why the claim must now be
 * held back (not deleted), or undefined. `claim` is the claim as that check
 * just read it live: its resourceVersion is the delete's precondition, so
 * whatever changes it after this read makes the delete fail.
 */
export type LastCheck = (
  claim: V1PersistentVolumeClaim,
) => Promise<string | undefined>;

/** What a step made of one claim: ready for its last check and delete, or held back. */
export type Prepared =
  | {
      kind: 'ready';
      confirmed: Confirmed;
      /** What the step adds to the claim's outcome, whatever becomes of it (a snapshot's name, …). */
      outcome?: Partial<PvcOutcome>;
      /** Asked again right before each delete of the claim. */
      lastCheck?: LastCheck;
    }
  | {
      kind: 'held';
      confirmed: Confirmed;
      /** Why it is not deleted; the job ends `incomplete`, naming it. */
      reason: string;
      outcome?: Partial<PvcOutcome>;
    };

/**
 * Work a job does for its claims before their last live check and delete
 * (a snapshot, …). A claim it holds back is not deleted. The job's re-check
 * and delete come after it, unchanged.
 */
export interface BeforeDeleteStep {
  /**
   * How many claims the job prepares at once: it prepares, checks and
   * deletes a batch of this many before preparing the next, so that what a
   * step prepared is not left waiting for the rest of the job.
   */
  readonly batchSize: number;
  /** Prepares each claim once, in the order given; `stop` ends the waiting (the instance shuts down). */
  prepare(claims: readonly Confirmed[], stop: AbortSignal): Promise<Prepared[]>;
}

/** Starts a step for a job; undefined when the job does not ask for it. */
export interface BeforeDeleteStepFactory {
  start(options: {
    job: PruneJob;
    gateway: KubeGateway;
    request?: JobRequest;
  }): BeforeDeleteStep | undefined;
}
