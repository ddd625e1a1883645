import { render, screen } from '@testing-library/react';
import { PruneOutcome } from './PruneOutcome';
import { GiB } from '../../__testUtils__/fixtures';

describe('PruneOutcome', () => {
  it('tells a Retain volume apart: released, kept and billed', () => {
    render(
      <PruneOutcome
        dryRun={false}
        status="succeeded"
        summary={{
          deleted: [
            {
              name: 'data-db-2',
              uid: 'u2',
              bytes: 10 * GiB,
              volume: {
                name: 'pv-2',
                reclaimPolicy: 'Retain',
                fate: 'released',
              },
            },
          ],
          skipped: [],
          failed: [],
          bytesReclaimed: 0,
        }}
      />,
    );
    expect(screen.getByText('Prune finished')).toBeInTheDocument();
    expect(
      screen.getByText(
        'volume pv-2 (Retain) is released: the disk is kept and still billed',
      ),
    ).toBeInTheDocument();
    expect(
      screen.getByText('0 B reclaimed', { selector: 'strong' }),
    ).toBeInTheDocument();
  });

  it('says an aborted job deleted nothing when it did not', () => {
    render(
      <PruneOutcome
        dryRun
        status="aborted"
        reason="the lease was lost"
        summary={{ deleted: [], skipped: [], failed: [], bytesReclaimed: 0 }}
      />,
    );
    expect(screen.getByRole('alert')).toHaveTextContent(
      'Dry run aborted: the lease was lost',
    );
    expect(screen.getByRole('alert')).toHaveTextContent(
      'It found nothing deletable before it stopped.',
    );
  });
});
