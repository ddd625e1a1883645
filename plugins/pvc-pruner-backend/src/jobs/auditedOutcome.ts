import type { AuditorServiceEvent } from '@backstage/backend-plugin-api';
import { snapshotsOf } from '../snapshots/snapshotsOf';
import type { JobOutcomeReporter } from './PruneJobs';

/** Ends a prune's audit event with the job's outcome: what it deleted, skipped or failed, and the snapshots it took. */
export function auditedOutcome(audit: AuditorServiceEvent): JobOutcomeReporter {
  return {
    finished: (finishedJob, result) =>
      // Incomplete is carried out, with claims whose deletion is still pending: listed.
      void (result.status === 'succeeded' || result.status === 'incomplete'
        ? audit.success({
            meta: {
              jobId: finishedJob.id,
              outcome: result.status,
              deleted: result.summary.deleted.map(p => p.name),
              terminating: result.summary.terminating.map(p => p.name),
              skipped: result.summary.skipped.map(p => p.name),
              snapshots: snapshotsOf(result.summary),
            },
          })
        : audit.fail({
            error: new Error(
              `prune ${result.status}${
                result.reason ? `: ${result.reason}` : ''
              }`,
            ),
            meta: {
              jobId: finishedJob.id,
              outcome: result.status,
              deleted: result.summary.deleted.map(p => p.name),
              failed: result.summary.failed.map(p => p.name),
              snapshots: snapshotsOf(result.summary),
            },
          })),
    crashed: (_job, error) => void audit.fail({ error }),
  };
}
