import { render, screen } from '@testing-library/react';
import { PvcProgressTable } from './PvcProgressTable';
import { GiB } from '../../__testUtils__/fixtures';

describe('PvcProgressTable', () => {
  it('shows each claim’s state, volume fate and reason', () => {
    render(
      <PvcProgressTable
        dryRun={false}
        pvcs={[
          {
            name: 'a',
            uid: '1',
            bytes: GiB,
            state: 'deleted',
            volume: { name: 'pv-a', reclaimPolicy: 'Retain', fate: 'released' },
          },
          { name: 'b', uid: '2', state: 'failed', reason: 'forbidden' },
          { name: 'c', uid: '3', state: 'pending' },
        ]}
      />,
    );
    expect(screen.getByText('Deleted')).toBeInTheDocument();
    expect(
      screen.getByText('pv-a: released, still billed (Retain)'),
    ).toBeInTheDocument();
    expect(screen.getByText('Failed')).toBeInTheDocument();
    expect(screen.getByText('forbidden')).toBeInTheDocument();
    expect(screen.getByText('Pending')).toBeInTheDocument();
    expect(screen.getByText('1 GiB')).toBeInTheDocument();
  });
});
