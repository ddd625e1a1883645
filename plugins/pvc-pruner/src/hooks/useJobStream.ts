import { useEffect, useState } from 'react';
import { useApi } from '@backstage/core-plugin-api';
import { PruneEvent } from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerApiRef } from '../api/PvcPrunerApi';

/** A job's events so far, read from its stream. */
export interface JobStreamState {
  events: PruneEvent[];
  /** The stream ended: the job finished, or the stream failed (see `error`). */
  ended: boolean;
  error?: Error;
}

const INITIAL: JobStreamState = { events: [], ended: false };

/**
 * Follows a job's event stream from the start (`after=0`), so attaching to a
 * running job, or opening a finished one, replays everything it did.
 * Pass undefined to not stream.
 */
export function useJobStream(jobId: string | undefined): JobStreamState {
  const api = useApi(pvcPrunerApiRef);
  const [state, setState] = useState<JobStreamState>(INITIAL);

  useEffect(() => {
    setState(INITIAL);
    if (!jobId) return undefined;
    const ctrl = new AbortController();
    api
      .streamJobEvents(
        jobId,
        0,
        event => setState(s => ({ ...s, events: [...s.events, event] })),
        ctrl.signal,
      )
      .then(() => {
        if (!ctrl.signal.aborted) setState(s => ({ ...s, ended: true }));
      })
      .catch((error: Error) => {
        if (!ctrl.signal.aborted) setState(s => ({ ...s, error, ended: true }));
      });
    return () => ctrl.abort();
  }, [api, jobId]);

  return state;
}
