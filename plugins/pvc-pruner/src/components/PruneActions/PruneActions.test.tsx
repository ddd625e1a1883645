import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { PruneActions } from './PruneActions';
import { dryRunButton, pruneButton } from '../../__testUtils__/pruneControls';

describe('PruneActions', () => {
  it('calls back when enabled', async () => {
    const onDryRun = jest.fn();
    const onPrune = jest.fn();
    render(
      <PruneActions statefulSet="db" onDryRun={onDryRun} onPrune={onPrune} />,
    );
    await userEvent.click(dryRunButton('db'));
    await userEvent.click(pruneButton('db'));
    expect(onDryRun).toHaveBeenCalled();
    expect(onPrune).toHaveBeenCalled();
  });

  it('disables both buttons and says why', () => {
    render(
      <PruneActions
        statefulSet="db"
        disabledReason="Not allowed"
        onDryRun={jest.fn()}
        onPrune={jest.fn()}
      />,
    );
    expect(dryRunButton('db')).toBeDisabled();
    expect(pruneButton('db')).toBeDisabled();
    expect(screen.getByText('Not allowed')).toBeInTheDocument();
  });
});
