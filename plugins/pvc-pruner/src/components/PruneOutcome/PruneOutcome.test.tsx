import { render, screen, within } from '@testing-library/react';
import {
  PvcOutcome,
  emptyPruneSummary,
} from 'backstage-plugin-pvc-pruner-common';
import { PruneOutcome } from './PruneOutcome';
import { GiB } from '../../__testUtils__/fixtures';

type VolumeOutcome = NonNullable<PvcOutcome['volume']>;

/** Claim data-db-<ordinal> of 10 GiB, on volume pv-<ordinal>. */
function claim(
  ordinal: number,
  reclaimPolicy: VolumeOutcome['reclaimPolicy'],
  fate: VolumeOutcome['fate'],
  overrides: Partial<PvcOutcome> = {},
): PvcOutcome {
  return {
    name: `data-db-${ordinal}`,
    uid: `u${ordinal}`,
    bytes: 10 * GiB,
    volume: { name: `pv-${ordinal}`, reclaimPolicy, fate },
    ...overrides,
  };
}

describe('PruneOutcome', () => {
  it("names each claim's snapshot with its restore size and expiry, and why a claim has none, kept claims included", () => {
    const expiresAt = '2026-12-09T01:00:00.000Z';
    render(
      <PruneOutcome
        dryRun={false}
        status="incomplete"
        summary={{
          ...emptyPruneSummary(),
          deleted: [
            claim(1, 'Delete', 'deleted', {
              snapshot: {
                name: 'data-db-1-3f2a9c1d',
                restoreBytes: 10 * GiB,
                expiresAt,
              },
            }),
            claim(2, 'Retain', 'released', {
              noSnapshot:
                'its volume pv-2 is kept when the claim is deleted (reclaim policy Retain), so it needs no snapshot',
            }),
          ],
          skipped: [
            claim(3, 'Delete', 'unknown', {
              reason: 'its snapshot failed: the snapshot reports an error',
            }),
          ],
        }}
      />,
    );
    const list = within(screen.getByRole('list', { name: 'Snapshots' }));
    expect(screen.getByText('Snapshots (1 of 2)')).toBeInTheDocument();
    expect(
      list.getByText(
        `VolumeSnapshot data-db-1-3f2a9c1d, restore size 10 GiB; kept until ${new Date(
          expiresAt,
        ).toLocaleString()}.`,
      ),
    ).toBeInTheDocument();
    expect(
      list.getByText(
        'No snapshot: its volume pv-2 is kept when the claim is deleted (reclaim policy Retain), so it needs no snapshot.',
      ),
    ).toBeInTheDocument();
    // A claim kept before any snapshot was taken says so under Skipped, not here.
    expect(list.queryByText('data-db-3')).not.toBeInTheDocument();
  });

  it('says nothing of snapshots for a prune that asked for none', () => {
    render(
      <PruneOutcome
        dryRun={false}
        status="succeeded"
        summary={{
          ...emptyPruneSummary(),
          deleted: [claim(1, 'Delete', 'deleted')],
        }}
      />,
    );
    expect(screen.queryByText(/Snapshots/)).not.toBeInTheDocument();
  });

  it('tells a Retain volume apart: released, kept and billed', () => {
    render(
      <PruneOutcome
        dryRun={false}
        status="succeeded"
        summary={{
          ...emptyPruneSummary(),
          deleted: [claim(2, 'Retain', 'released')],
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
        summary={emptyPruneSummary()}
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
          deleted: [claim(2, 'Delete', 'deleted')],
          terminating: [
            claim(3, 'Delete', 'unknown', {
              finalizers: ['acc.example/backup-hold'],
            }),
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

  it("speaks of a reclaim job's volumes: reclaimed and gone, skipped with why, failed with the volume's status message", () => {
    const volume = (name: string, overrides: Partial<PvcOutcome> = {}) => ({
      name,
      uid: `uid-${name}`,
      bytes: 10 * GiB,
      volume: {
        name,
        reclaimPolicy: 'Delete' as const,
        fate: 'deleted' as const,
      },
      ...overrides,
    });
    render(
      <PruneOutcome
        dryRun={false}
        status="failed"
        reason="pvc-3: its provisioner could not delete it"
        jobKind="reclaim"
        summary={{
          ...emptyPruneSummary(),
          deleted: [volume('pvc-1')],
          skipped: [
            volume('pvc-2', {
              reason: 'it is Bound, not Released to a claim',
            }),
          ],
          failed: [
            volume('pvc-3', {
              reason:
                'its provisioner could not delete it, and it went Failed: disk vol-3 is attached',
            }),
          ],
          bytesReclaimed: 10 * GiB,
        }}
      />,
    );
    expect(screen.getByRole('alert')).toHaveTextContent(
      'Reclaim failed: pvc-3: its provisioner could not delete it',
    );
    expect(screen.getByRole('alert')).toHaveTextContent(
      '1 reclaimed, 1 skipped, 1 failed',
    );
    expect(screen.getByText('Reclaimed (1)')).toBeInTheDocument();
    expect(screen.queryByText(/^Deleted/)).not.toBeInTheDocument();
    expect(screen.getByText('pvc-1 — 10 GiB')).toBeInTheDocument();
    expect(
      screen.getByText(
        'PersistentVolume gone: its provisioner deleted its disk',
      ),
    ).toBeInTheDocument();
    expect(screen.getByText('Skipped (1)')).toBeInTheDocument();
    expect(
      screen.getByText('it is Bound, not Released to a claim'),
    ).toBeInTheDocument();
    expect(screen.getByText('Failed (1)')).toBeInTheDocument();
    expect(
      screen.getByText(
        'its provisioner could not delete it, and it went Failed: disk vol-3 is attached',
      ),
    ).toBeInTheDocument();
    expect(screen.getByText(/across 1 volume\.$/)).toBeInTheDocument();
  });
});
