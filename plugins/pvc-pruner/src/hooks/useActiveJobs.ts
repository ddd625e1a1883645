import { useCallback, useEffect, useRef, useState } from 'react';
import { PruneJob, PruneJobStatus } from 'backstage-plugin-pvc-pruner-common';
import { ConfirmedPvc } from '../state/pruneProgressReducer';

/** A prune the card follows: one the user just started, or one it found running. */
export interface ActiveJob {
  id: string;
  dryRun: boolean;
  /** A reclaim of Released volumes (traced to this StatefulSet) rather than a prune; a prune unless told. */
  kind?: PruneJob['kind'];
  cluster: string;
  namespace: string;
  statefulSet: string;
  /** Exactly the claims that were sent. */
  pvcs: ConfirmedPvc[];
  /** Found running when the page loaded (maybe started by someone else). */
  reattached: boolean;
  requestedBy?: string;
  /** An automatic prune's run, and the entity it acted for. */
  automaticRunId?: string;
  onBehalfOf?: string;
  finished: boolean;
}

/** Identifies a StatefulSet across clusters. */
export function statefulSetKey(s: {
  cluster: string;
  namespace: string;
  statefulSet: string;
}): string {
  return JSON.stringify([s.cluster, s.namespace, s.statefulSet]);
}

const LIVE: ReadonlyArray<PruneJobStatus> = ['queued', 'running'];

/**
 * The jobs the card shows progress for, one per StatefulSet. A queued or
 * running job in `history` is attached to once, unless the card already
 * follows a job of that StatefulSet.
 */
export function useActiveJobs(history: PruneJob[]) {
  const [jobs, setJobs] = useState<Record<string, ActiveJob>>({});
  const seen = useRef(new Set<string>());

  useEffect(() => {
    const live = history.filter(
      job => LIVE.includes(job.status) && !seen.current.has(job.id),
    );
    if (live.length === 0) return;
    live.forEach(job => seen.current.add(job.id));
    setJobs(current => {
      const next = { ...current };
      // Newest first: the first live job of a StatefulSet wins.
      for (const job of live) {
        const key = statefulSetKey(job);
        if (next[key] && !next[key].finished) continue;
        next[key] = {
          id: job.id,
          dryRun: job.dryRun,
          kind: job.kind,
          cluster: job.cluster,
          namespace: job.namespace,
          statefulSet: job.statefulSet,
          pvcs: job.pvcs.map(p => ({ name: p.name, uid: p.uid })),
          reattached: true,
          requestedBy: job.requestedBy,
          automaticRunId: job.automaticRunId,
          onBehalfOf: job.onBehalfOf,
          finished: false,
        };
      }
      return next;
    });
  }, [history]);

  const start = useCallback((job: ActiveJob) => {
    seen.current.add(job.id);
    setJobs(current => ({ ...current, [statefulSetKey(job)]: job }));
  }, []);

  const finish = useCallback((jobId: string) => {
    setJobs(current => {
      const entry = Object.entries(current).find(([, j]) => j.id === jobId);
      if (!entry || entry[1].finished) return current;
      return { ...current, [entry[0]]: { ...entry[1], finished: true } };
    });
  }, []);

  const dismiss = useCallback((jobId: string) => {
    setJobs(current =>
      Object.fromEntries(
        Object.entries(current).filter(([, j]) => j.id !== jobId),
      ),
    );
  }, []);

  return { jobs, start, finish, dismiss };
}
