import { act, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { UnownedPrune } from './UnownedPrune';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import {
  eventFactory,
  makeOrphan,
  makeStatefulSet,
} from '../../__testUtils__/fixtures';
import { renderWithApis } from '../../__testUtils__/renderWithApis';
import { pruneButton } from '../../__testUtils__/pruneControls';
import { responseError } from '../../__testUtils__/responseError';

const row = { cluster: 'demo', namespace: 'search', name: 'nightly-reports' };
const nightly = makeStatefulSet('nightly-reports', {
  namespace: 'search',
  replicas: 1,
  orphans: [makeOrphan('nightly-reports', 1), makeOrphan('nightly-reports', 2)],
});

describe('UnownedPrune', () => {
  it('loads the StatefulSet, prunes it without an entity after its name is typed, follows the job, and reloads when it ends', async () => {
    const api = new FakePvcPrunerApi();
    api.unownedOrphans = async () => ({
      cluster: 'demo',
      statefulSet: nightly,
    });
    const onClose = jest.fn();
    await renderWithApis(<UnownedPrune statefulSet={row} onClose={onClose} />, {
      api,
    });

    expect(
      await screen.findByText('data-nightly-reports-1'),
    ).toBeInTheDocument();
    expect(api.unownedRequests).toEqual([
      { cluster: 'demo', namespace: 'search', statefulSet: 'nightly-reports' },
    ]);
    await userEvent.click(pruneButton('nightly-reports'));
    const dialog = screen.getByRole('dialog');
    const confirm = within(dialog).getByRole('button', {
      name: 'Delete 2 claims',
    });
    expect(confirm).toBeDisabled();
    await userEvent.type(
      within(dialog).getByRole('textbox'),
      'nightly-reports',
    );
    await userEvent.click(confirm);

    expect(api.started).toHaveLength(1);
    expect(api.started[0]).not.toHaveProperty('entityRef');
    expect(api.started[0]).toMatchObject({
      cluster: 'demo',
      namespace: 'search',
      statefulSet: 'nightly-reports',
      dryRun: false,
      pvcs: [
        { name: 'data-nightly-reports-1', uid: 'uid-data-nightly-reports-1' },
        { name: 'data-nightly-reports-2', uid: 'uid-data-nightly-reports-2' },
      ],
    });
    const panel = await screen.findByRole('region', {
      name: 'Prune of search/nightly-reports progress',
    });
    const event = eventFactory();
    api.unownedOrphans = async () => ({
      cluster: 'demo',
      statefulSet: { ...nightly, orphans: [] },
    });
    act(() =>
      api.emit(
        event('job-started'),
        event('pvc-deleted', { pvc: 'data-nightly-reports-1' }),
        event('pvc-deleted', { pvc: 'data-nightly-reports-2' }),
        event('job-finished', { status: 'succeeded' }),
      ),
    );
    expect(
      await within(panel).findByText('Prune finished'),
    ).toBeInTheDocument();
    expect(await screen.findByText('No orphaned claims.')).toBeInTheDocument();
    expect(api.unownedRequests).toHaveLength(2);

    await userEvent.click(
      screen.getByRole('button', {
        name: 'Close the prune of search/nightly-reports',
      }),
    );
    expect(onClose).toHaveBeenCalledWith(true);
  });

  it('offers the snapshot choice when the backend has snapshots on, as the card does, and sends it', async () => {
    const api = new FakePvcPrunerApi();
    const planned = {
      ...nightly,
      orphans: nightly.orphans.map(o => ({
        ...o,
        snapshotPlan: {
          kind: 'class' as const,
          volumeSnapshotClass: 'csi-snapshots',
        },
      })),
    };
    api.unownedOrphans = async () => ({
      cluster: 'demo',
      statefulSet: planned,
      snapshots: { enabled: true, retentionDays: 7, required: true },
    });
    await renderWithApis(
      <UnownedPrune statefulSet={row} onClose={jest.fn()} />,
      {
        api,
      },
    );
    await screen.findByText('data-nightly-reports-1');
    await userEvent.click(pruneButton('nightly-reports'));
    const dialog = screen.getByRole('dialog');
    expect(
      within(dialog).getByRole('checkbox', {
        name: 'Keep a snapshot for 7 days',
      }),
    ).toBeChecked();
    await userEvent.type(
      within(dialog).getByRole('textbox'),
      'nightly-reports',
    );
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Delete 2 claims' }),
    );
    expect(api.started[0]).toMatchObject({ snapshot: true });
  });

  it("shows the backend's refusal when an entity claims it after all", async () => {
    const api = new FakePvcPrunerApi();
    const refusal = await responseError(
      403,
      'NotAllowedError',
      'StatefulSet search/nightly-reports in cluster "demo" is claimed by component:default/reports: its claims are on the card of the entity it belongs to',
    );
    api.unownedOrphans = async () => {
      throw refusal;
    };
    await renderWithApis(
      <UnownedPrune statefulSet={row} onClose={jest.fn()} />,
      {
        api,
      },
    );
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Could not load search/nightly-reports in cluster demo: StatefulSet search/nightly-reports in cluster "demo" is claimed by component:default/reports',
    );
    expect(screen.queryByRole('button', { name: /^Prune/ })).toBeNull();
  });
});
