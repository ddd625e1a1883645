import { act, screen, within } from '@testing-library/react';
import { PruneProgress } from './PruneProgress';
import { ActiveJob } from '../../hooks/useActiveJobs';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import { GiB, eventFactory, makeJob } from '../../__testUtils__/fixtures';
import { renderWithApis } from '../../__testUtils__/renderWithApis';

const job: ActiveJob = {
  id: 'job-1',
  dryRun: false,
  cluster: 'prod',
  namespace: 'shop',
  statefulSet: 'db',
  pvcs: [
    { name: 'data-db-2', uid: 'u2', bytes: 10 * GiB },
    { name: 'data-db-3', uid: 'u3', bytes: 10 * GiB },
    { name: 'data-db-4', uid: 'u4', bytes: 10 * GiB },
  ],
  reattached: false,
  finished: false,
};

const deletedOutcome = (
  name: string,
  fate: 'deleted' | 'released' | 'unknown',
) => ({
  name,
  uid: `u${name.slice(-1)}`,
  bytes: 10 * GiB,
  volume: {
    name: `pv-${name}`,
    reclaimPolicy: fate === 'released' ? 'Retain' : 'Delete',
    fate,
  },
});

function bar() {
  return screen.getByRole('progressbar', {
    name: 'Prune of shop/db: claims done',
  });
}

function stateOf(pvc: string) {
  return within(screen.getByTestId(`progress-${pvc}`)).getByTestId('pvc-state')
    .textContent;
}

describe('PruneProgress', () => {
  it('says a prune found under way was started automatically, per the entity’s annotation, or by whom', async () => {
    const api = new FakePvcPrunerApi();
    const { unmount } = await renderWithApis(
      <PruneProgress
        job={{
          ...job,
          reattached: true,
          requestedBy: 'plugin:pvc-pruner',
          automaticRunId: 'run-1',
          onBehalfOf: 'component:default/shop',
        }}
      />,
      { api },
    );
    expect(
      screen.getByText(
        "This prune was already under way, automatic, per the entity's auto-prune annotation, on behalf of component:default/shop; showing it from the start.",
      ),
    ).toBeInTheDocument();
    unmount();
    await renderWithApis(
      <PruneProgress
        job={{ ...job, reattached: true, requestedBy: 'user:default/ann' }}
      />,
      { api },
    );
    expect(
      screen.getByText(
        'This prune was already under way, started by user:default/ann; showing it from the start.',
      ),
    ).toBeInTheDocument();
  });

  it('moves the bar and each claim as events arrive', async () => {
    const api = new FakePvcPrunerApi();
    const event = eventFactory();
    await renderWithApis(<PruneProgress job={job} />, { api });
    expect(bar()).toHaveAttribute('aria-valuenow', '0');
    expect(stateOf('data-db-2')).toBe('Pending');
    expect(screen.getByText('Queued')).toBeInTheDocument();

    act(() =>
      api.emit(
        event('job-queued'),
        event('job-started'),
        event('pvc-deleting', { pvc: 'data-db-2' }),
      ),
    );
    expect(stateOf('data-db-2')).toBe('Deleting…');
    expect(screen.getByText('Running')).toBeInTheDocument();
    expect(bar()).toHaveAttribute('aria-valuenow', '0');

    act(() =>
      api.emit(
        event('pvc-deleted', {
          pvc: 'data-db-2',
          outcome: deletedOutcome('data-db-2', 'unknown'),
        }),
      ),
    );
    expect(stateOf('data-db-2')).toBe('Deleted');
    expect(bar()).toHaveAttribute('aria-valuenow', '33');
    expect(screen.getByText('1 of 3 claims done')).toBeInTheDocument();
    expect(
      screen.getByText(/pv-data-db-2 \(Delete\): waiting to see its fate/),
    ).toBeInTheDocument();

    act(() =>
      api.emit(
        event('volume-deleted', {
          pvc: 'data-db-2',
          outcome: deletedOutcome('data-db-2', 'deleted'),
        }),
      ),
    );
    expect(
      screen.getByText('pv-data-db-2: deleted (Delete)'),
    ).toBeInTheDocument();

    act(() =>
      api.emit(
        event('pvc-skipped', {
          pvc: 'data-db-3',
          outcome: {
            name: 'data-db-3',
            uid: 'u3',
            reason: 'it is no longer an orphan: mounted by pod db-3',
          },
        }),
      ),
    );
    expect(stateOf('data-db-3')).toBe('Skipped');
    expect(stateOf('data-db-4')).toBe('Pending');
    expect(bar()).toHaveAttribute('aria-valuenow', '67');
    expect(
      screen.getByText('it is no longer an orphan: mounted by pod db-3'),
    ).toBeInTheDocument();
    expect(
      screen.getByRole('log', { name: 'Prune of shop/db events' }),
    ).toHaveTextContent('pvc-skipped data-db-3');
  });

  it('ends with a summary of deleted, skipped and failed claims and the bytes reclaimed', async () => {
    const api = new FakePvcPrunerApi();
    api.jobs = [
      makeJob({
        status: 'failed',
        reason: '1 claim(s) could not be deleted',
        summary: {
          deleted: [deletedOutcome('data-db-2', 'deleted')],
          terminating: [],
          skipped: [
            { name: 'data-db-3', uid: 'u3', reason: 'it no longer exists' },
          ],
          failed: [
            {
              name: 'data-db-4',
              uid: 'u4',
              reason: 'etcdserver: request timed out',
            },
          ],
          bytesReclaimed: 10 * GiB,
        },
      }),
    ];
    const onFinished = jest.fn();
    const event = eventFactory();
    await renderWithApis(
      <PruneProgress job={job} onFinished={onFinished} onDismiss={jest.fn()} />,
      { api },
    );
    act(() =>
      api.emit(
        event('job-started'),
        event('pvc-deleted', {
          pvc: 'data-db-2',
          outcome: deletedOutcome('data-db-2', 'unknown'),
        }),
        event('volume-deleted', {
          pvc: 'data-db-2',
          outcome: deletedOutcome('data-db-2', 'deleted'),
        }),
        event('pvc-skipped', {
          pvc: 'data-db-3',
          outcome: {
            name: 'data-db-3',
            uid: 'u3',
            reason: 'it no longer exists',
          },
        }),
        event('pvc-failed', {
          pvc: 'data-db-4',
          outcome: {
            name: 'data-db-4',
            uid: 'u4',
            reason: 'etcdserver: request timed out',
          },
        }),
        event('job-finished', { status: 'failed' }),
      ),
    );
    expect(
      await screen.findByText('Prune failed: 1 claim(s) could not be deleted'),
    ).toBeInTheDocument();
    expect(bar()).toHaveAttribute('aria-valuenow', '100');
    expect(screen.getByText('Skipped (1)')).toBeInTheDocument();
    expect(screen.getByText('Failed (1)')).toBeInTheDocument();
    expect(
      screen.getByText('pv-data-db-2: deleted (Delete)'),
    ).toBeInTheDocument();
    expect(screen.getAllByText('it no longer exists').length).toBeGreaterThan(
      0,
    );
    expect(
      screen.getByText('10 GiB reclaimed', { selector: 'strong' }),
    ).toBeInTheDocument();
    expect(onFinished).toHaveBeenCalledWith('job-1');
    expect(
      screen.getByRole('button', { name: /Close the results/ }),
    ).toBeInTheDocument();
  });

  it('shows an aborted job’s reason and what it had already deleted', async () => {
    const api = new FakePvcPrunerApi();
    const reason =
      'StatefulSet shop/db was scaled from 2 to 4 replicas while the prune ran';
    api.jobs = [
      makeJob({
        status: 'aborted',
        reason,
        summary: {
          deleted: [deletedOutcome('data-db-2', 'deleted')],
          terminating: [],
          skipped: [
            {
              name: 'data-db-3',
              uid: 'u3',
              reason: `not attempted: the job stopped because ${reason}`,
            },
            {
              name: 'data-db-4',
              uid: 'u4',
              reason: `not attempted: the job stopped because ${reason}`,
            },
          ],
          failed: [],
          bytesReclaimed: 10 * GiB,
        },
      }),
    ];
    const event = eventFactory();
    await renderWithApis(<PruneProgress job={job} />, { api });
    act(() =>
      api.emit(
        event('job-started'),
        event('pvc-deleted', {
          pvc: 'data-db-2',
          outcome: deletedOutcome('data-db-2', 'deleted'),
        }),
        event('job-finished', { status: 'aborted' }),
      ),
    );
    const alert = await screen.findByText(`Prune aborted: ${reason}`);
    expect(alert.closest('[role="alert"]')).toHaveTextContent(
      'Already deleted before it stopped: data-db-2.',
    );
    expect(screen.getByText('Aborted')).toBeInTheDocument();
  });

  it('follows a reclaim job by its volumes, and ends with what became of each', async () => {
    const api = new FakePvcPrunerApi();
    const reclaimed = {
      name: 'pvc-1',
      uid: 'uid-pvc-1',
      bytes: 10 * GiB,
      volume: {
        name: 'pvc-1',
        reclaimPolicy: 'Delete' as const,
        fate: 'deleted' as const,
      },
    };
    const skipped = {
      name: 'pvc-2',
      uid: 'uid-pvc-2',
      reason: 'its claim exists again',
    };
    api.jobs = [
      makeJob({
        kind: 'reclaim',
        status: 'succeeded',
        summary: {
          deleted: [reclaimed],
          terminating: [],
          skipped: [skipped],
          failed: [],
          bytesReclaimed: 10 * GiB,
        },
      }),
    ];
    const event = eventFactory();
    await renderWithApis(
      <PruneProgress
        job={{
          ...job,
          kind: 'reclaim',
          pvcs: [
            { name: 'pvc-1', uid: 'uid-pvc-1' },
            { name: 'pvc-2', uid: 'uid-pvc-2' },
          ],
        }}
        entityRef="component:default/shop"
      />,
      { api },
    );
    const volumesDone = () =>
      screen.getByRole('progressbar', {
        name: 'Reclaim of 2 Released volumes of shop/db: volumes done',
      });
    act(() =>
      api.emit(
        event('job-started'),
        event('volume-reclaiming', { pvc: 'pvc-1' }),
        event('volume-deleted', { pvc: 'pvc-1', outcome: reclaimed }),
      ),
    );
    expect(volumesDone()).toHaveAttribute('aria-valuenow', '50');
    expect(screen.getByText('1 of 2 volumes done')).toBeInTheDocument();
    act(() =>
      api.emit(
        event('volume-skipped', { pvc: 'pvc-2', outcome: skipped }),
        event('job-finished', { status: 'succeeded' }),
      ),
    );
    expect(await screen.findByText('Reclaim finished')).toBeInTheDocument();
    expect(volumesDone()).toHaveAttribute('aria-valuenow', '100');
    expect(await screen.findByText('Reclaimed (1)')).toBeInTheDocument();
    expect(
      screen.getByText(
        'PersistentVolume gone: its provisioner deleted its disk',
      ),
    ).toBeInTheDocument();
    expect(screen.getByText('its claim exists again')).toBeInTheDocument();
    // No claim table, and no offer to reclaim what a reclaim just did.
    expect(
      screen.queryByRole('table', { name: 'Claim progress' }),
    ).not.toBeInTheDocument();
    expect(screen.queryByText(/Deleted/)).not.toBeInTheDocument();
  });
});
