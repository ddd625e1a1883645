import { ReactNode, createContext, useContext } from 'react';
import { ActiveJob } from './useActiveJobs';

/** The prunes the card follows, shared by every StatefulSet section in it. */
export interface ActiveJobsContextValue {
  /** The followed prunes, by {@link statefulSetKey}. */
  jobs: Record<string, ActiveJob>;
  /** A prune was started from the card. */
  started(job: ActiveJob): void;
  /** A followed prune's job-finished event arrived. */
  finished(jobId: string): void;
  /** The user closed a finished prune's panel. */
  dismissed(jobId: string): void;
}

const ActiveJobsContext = createContext<ActiveJobsContextValue | undefined>(
  undefined,
);

/** Makes the card's prunes available to the sections below it. */
export function ActiveJobsProvider(props: {
  value: ActiveJobsContextValue;
  children?: ReactNode;
}) {
  return (
    <ActiveJobsContext.Provider value={props.value}>
      {props.children}
    </ActiveJobsContext.Provider>
  );
}

/** The card's prunes; only inside an {@link ActiveJobsProvider}. */
export function useActiveJobsContext(): ActiveJobsContextValue {
  const value = useContext(ActiveJobsContext);
  if (!value) {
    throw new Error(
      'useActiveJobsContext must be used inside an ActiveJobsProvider',
    );
  }
  return value;
}
