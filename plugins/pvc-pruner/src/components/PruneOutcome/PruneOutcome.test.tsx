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
          terminating: [],
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
        summary={{
          deleted: [],
          terminating: [],
          skipped: [],
          failed: [],
          bytesReclaimed: 0,
        }}
      />,
    );
    expect(screen.getByRole('alert')).toHaveTextContent(
      'Dry run aborted: the lease was lost',
    );
    expect(screen.getByRole('alert')).toHaveTextContent(
      'It found nothing deletable before it stopped.',
    );
  });

  it('tells a claim still terminating apart from a deleted one: named with what holds it, its disk not counted', () => {
    render(
      <PruneOutcome
        dryRun={false}
        status="incomplete"
        reason="Not everything was reclaimed: data-db-3 is still terminating, held by acc.example/backup-hold"
        summary={{
          deleted: [
            {
              name: 'data-db-2',
              uid: 'u2',
              bytes: 10 * GiB,
              volume: {
                name: 'pv-2',
                reclaimPolicy: 'Delete',
                fate: 'deleted',
              },
            },
          ],
          terminating: [
            {
              name: 'data-db-3',
              uid: 'u3',
              bytes: 10 * GiB,
              finalizers: ['acc.example/backup-hold'],
              volume: {
                name: 'pv-3',
                reclaimPolicy: 'Delete',
                fate: 'unknown',
              },
            },
          ],
          skipped: [],
          failed: [],
          bytesReclaimed: 10 * GiB,
        }}
      />,
    );
    expect(
      screen.getByText(
        'Prune incomplete: Not everything was reclaimed: data-db-3 is still terminating, held by acc.example/backup-hold',
      ),
    ).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent(
      '1 deleted, 1 still terminating, 0 skipped, 0 failed; 10 GiB reclaimed.',
    );
    expect(
      screen.getByText('Still terminating, not deleted (1)'),
    ).toBeInTheDocument();
    expect(
      screen.getByText(
        'held by acc.example/backup-hold: its deletion was accepted, and the claim and its disk stay until it finishes',
      ),
    ).toBeInTheDocument();
    expect(screen.queryByText('Prune finished')).not.toBeInTheDocument();
  });
});
