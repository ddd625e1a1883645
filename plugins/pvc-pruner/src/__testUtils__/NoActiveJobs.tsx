import { ReactNode } from 'react';
import { ActiveJobsProvider } from '../hooks/ActiveJobsContext';

/** The card's active-jobs context, following no prune: for sections rendered alone. */
export function NoActiveJobs(props: { children: ReactNode }) {
  return (
    <ActiveJobsProvider
      value={{
        jobs: {},
        started: jest.fn(),
        finished: jest.fn(),
        dismissed: jest.fn(),
      }}
    >
      {props.children}
    </ActiveJobsProvider>
  );
}
