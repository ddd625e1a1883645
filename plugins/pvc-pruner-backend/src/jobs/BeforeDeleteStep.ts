import type { PruneJob, PvcOutcome } from 'backstage-plugin-pvc-pruner-common';
import type { KubeGateway } from '../kubernetes';
import type { Confirmed } from './ClaimRecheck';
import type { JobRequest } from './DeleteGuard';

/** What a step made of one claim: ready for its last check and delete, or held back. */
export type Prepared =
  | {
      kind: 'ready';
      confirmed: Confirmed;
      /** What the step adds to the claim's outcome, whatever becomes of it (a snapshot's name, …). */
      outcome?: Partial<PvcOutcome>;
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
