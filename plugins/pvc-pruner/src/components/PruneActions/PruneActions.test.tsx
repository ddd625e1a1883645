import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { PruneActions } from './PruneActions';

describe('PruneActions', () => {
  it('calls back when enabled', async () => {
    const onDryRun = jest.fn();
    const onPrune = jest.fn();
    render(
      <PruneActions statefulSet="db" onDryRun={onDryRun} onPrune={onPrune} />,
    );
    await userEvent.click(
      screen.getByRole('button', { name: 'Dry run prune of db' }),
    );
    await userEvent.click(
      screen.getByRole('button', { name: 'Prune orphaned claims of db' }),
    );
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
    expect(
      screen.getByRole('button', { name: 'Dry run prune of db' }),
    ).toBeDisabled();
    expect(
      screen.getByRole('button', { name: 'Prune orphaned claims of db' }),
    ).toBeDisabled();
    expect(screen.getByText('Not allowed')).toBeInTheDocument();
  });
});
