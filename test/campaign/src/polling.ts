/** Following a job to its end through whichever replicas are up. */
import { historyNow } from 'kube-sim';
import {
  PruneJob,
  TERMINAL_JOB_STATUSES,
} from 'backstage-plugin-pvc-pruner-common';
import type { RunContext } from './runScenario';

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** How long a job may take to reach a terminal status after its POST, its replica's death included. */
export const JOB_END_BOUND_MS = 45_000;

/** The replicas that answer: alive and not stopped. */
export function usable(ctx: RunContext) {
  return ctx.replicas.filter(r => r.alive && !r.frozen).map(r => r.index);
}

/** Asks the live replicas in turn until the job is terminal, or JOB_END_BOUND_MS after it was sent. */
export async function pollJob(
  ctx: RunContext,
  job: { id: string; sentAt: number; final?: PruneJob; endedAt?: number },
) {
  const deadline = job.sentAt + JOB_END_BOUND_MS;
  let turn = 0;
  while (historyNow() < deadline) {
    const live = usable(ctx);
    if (live.length > 0) {
      const index = live[turn++ % live.length];
      const found = await ctx.clients[index].job(job.id).catch(() => undefined);
      if (found && TERMINAL_JOB_STATUSES.includes(found.status)) {
        job.final = found;
        job.endedAt = historyNow();
        return;
      }
    }
    await sleep(150);
  }
}
