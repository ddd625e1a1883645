import {
  ClaimKeep,
  KEEP_CLAIM_ANNOTATION,
  PruneJob,
} from 'backstage-plugin-pvc-pruner-common';
import { formatTime } from './format';

/** How the card and the history name a job that automatic pruning started. */
export const AUTOMATIC_JOB_TEXT =
  "automatic, per the entity's auto-prune annotation";

/**
 * Who started a job, as "by user:default/ann"; an automatic prune's
 * requester is the plugin's own principal, which says nothing to a reader,
 * so it is named by the annotation it acted on and the entity it acted for.
 */
export function jobRequester(
  job: Partial<Pick<PruneJob, 'requestedBy' | 'onBehalfOf' | 'automaticRunId'>>,
): string {
  if (!job.automaticRunId) return `by ${job.requestedBy}`;
  return job.onBehalfOf
    ? `${AUTOMATIC_JOB_TEXT}, on behalf of ${job.onBehalfOf}`
    : AUTOMATIC_JOB_TEXT;
}

/**
 * Why automatic pruning leaves a claim alone: "kept by user:default/ann on
 * 12/3/2026, 10:00:00 AM until 1/31/2027, …: holds the March export", or
 * "kept by its pvc-pruner.backstage.io/keep annotation".
 */
export function describeClaimKeep(keep: ClaimKeep): string {
  if (keep.source === 'annotation') {
    return `kept by its ${KEEP_CLAIM_ANNOTATION} annotation${
      keep.reason ? `: ${keep.reason}` : ''
    }`;
  }
  const who = keep.keptBy ? ` by ${keep.keptBy}` : '';
  const when = keep.keptAt ? ` on ${formatTime(keep.keptAt)}` : '';
  const until = keep.until ? ` until ${formatTime(keep.until)}` : '';
  return `kept${who}${when}${until}${keep.reason ? `: ${keep.reason}` : ''}`;
}
