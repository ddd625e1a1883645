import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

/** The button that opens the prune dialog of StatefulSet `statefulSet`. */
export const pruneButton = (statefulSet: string) =>
  screen.getByRole('button', {
    name: `Prune orphaned claims of ${statefulSet}`,
  });

/** The button that opens the dry-run dialog of StatefulSet `statefulSet`. */
export const dryRunButton = (statefulSet: string) =>
  screen.getByRole('button', { name: `Dry run prune of ${statefulSet}` });

/** Starts the dry run of the open prune dialog. */
export const startDryRun = () =>
  userEvent.click(screen.getByRole('button', { name: 'Start dry run' }));
