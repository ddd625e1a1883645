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

/**
 * Starts the dry run of the open prune dialog, and checks that the backend's
 * refusal is shown and the dialog stays open, so the user can read it.
 */
export async function startDryRunExpectingRefusal(refusal: RegExp) {
  await userEvent.click(screen.getByRole('button', { name: 'Start dry run' }));
  expect(await screen.findByText(refusal)).toBeInTheDocument();
  expect(screen.getByRole('dialog')).toBeInTheDocument();
}
