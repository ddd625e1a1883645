import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type {
  PruneJob,
  PruneSummary,
} from 'backstage-plugin-pvc-pruner-common';
import type {
  BeforeDeleteStep,
  BeforeDeleteStepFactory,
  Confirmed,
  JobRequest,
  Prepared,
} from '../jobs';
import { describeKeep } from './describeKeep';
import { annotationKeep } from './keepAnnotation';
import type { ClaimKeeps } from './types';

/** Claims whose card keeps are read in one query. */
const KEEPS_BATCH = 100;

/** One automatic job's keeps. */
class JobKeeps implements BeforeDeleteStep {
  readonly batchSize = KEEPS_BATCH;

  constructor(
    private readonly job: PruneJob,
    private readonly keeps: ClaimKeeps,
  ) {}

  async prepare(claims: readonly Confirmed[]): Promise<Prepared[]> {
    const kept = await this.keeps.keepsOf(
      this.job.cluster,
      claims.map(c => c.uid),
    );
    return claims.map((confirmed): Prepared => {
      const keep = kept.get(confirmed.uid);
      if (keep) return { kind: 'held', confirmed, reason: describeKeep(keep) };
      return {
        kind: 'ready',
        confirmed,
        lastCheck: claim => this.lastCheck(confirmed, claim),
      };
    });
  }

  /**
   * Right before the delete: the claim's annotation as the live check just
   * read it (an annotation written since changes its resourceVersion, and
   * the delete's precondition fails), then the fence with the card's keeps:
   * the claim is marked as being deleted first, and only then is its keep
   * read, so a keep stored before the mark is seen here and one after it is
   * refused. A dry run leaves no mark: it deletes nothing.
   */
  private async lastCheck(
    confirmed: Confirmed,
    claim: V1PersistentVolumeClaim,
  ): Promise<string | undefined> {
    const annotated = annotationKeep(claim);
    if (annotated) return describeKeep(annotated);
    const { cluster, id, dryRun } = this.job;
    if (!dryRun) await this.keeps.markDeleting(cluster, confirmed.uid, id);
    const keep = await this.keeps.keptNow(cluster, confirmed.uid);
    return keep && describeKeep(keep);
  }
}

/**
 * Keeps honoured by automatic prunes at the instant of the delete: a claim
 * kept through the card is held back before anything is done to it, and
 * each claim's last check before its delete reads its keep annotation and
 * its card keep once more (see {@link ClaimKeeps} for the fence). Only for
 * automatic prunes: a person's prune is warned about keeps, not stopped.
 */
export class KeepSteps implements BeforeDeleteStepFactory {
  constructor(private readonly keeps: ClaimKeeps) {}

  start(options: {
    job: PruneJob;
    request?: JobRequest;
  }): BeforeDeleteStep | undefined {
    if (!options.request?.automatic) return undefined;
    return new JobKeeps(options.job, this.keeps);
  }
}

/**
 * Once an automatic job has ended: lifts its deleting marks of the claims
 * it did not delete after all (skipped or failed: a precondition that
 * failed, a stop before the delete), so that they can be kept again. A
 * claim whose delete was accepted stays marked.
 */
export async function unmarkUndeleted(
  keeps: ClaimKeeps,
  job: PruneJob,
  summary: PruneSummary,
): Promise<void> {
  if (job.dryRun) return;
  for (const claim of [...summary.skipped, ...summary.failed])
    await keeps.unmarkDeleting(job.cluster, claim.uid, job.id);
}
