import { render, screen } from '@testing-library/react';
import { EventLog } from './EventLog';
import { eventFactory } from '../../__testUtils__/fixtures';

describe('EventLog', () => {
  it('lists the events in order', () => {
    const event = eventFactory();
    render(
      <EventLog
        events={[
          event('job-started', { message: 'Prune started on cluster prod' }),
          event('pvc-deleting', {
            pvc: 'data-db-2',
            message: 'Deleting data-db-2 (10 GiB)',
          }),
        ]}
      />,
    );
    const items = screen.getAllByRole('listitem');
    expect(items[0]).toHaveTextContent('Prune started on cluster prod');
    expect(items[1]).toHaveTextContent('Deleting data-db-2 (10 GiB)');
    expect(
      screen.getByRole('log', { name: 'Prune events' }),
    ).toBeInTheDocument();
  });

  it('says when there is nothing yet', () => {
    render(<EventLog events={[]} />);
    expect(screen.getByText('No events yet.')).toBeInTheDocument();
  });
});
