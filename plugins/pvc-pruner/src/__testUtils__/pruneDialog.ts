import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';

/**
 * Starts the dry run of the open prune dialog, and checks that the backend's
 * refusal is shown and the dialog stays open, so the user can read it.
 */
export async function startDryRunExpectingRefusal(refusal: RegExp) {
  await userEvent.click(screen.getByRole('button', { name: 'Start dry run' }));
  expect(await screen.findByText(refusal)).toBeInTheDocument();
  expect(screen.getByRole('dialog')).toBeInTheDocument();
}
