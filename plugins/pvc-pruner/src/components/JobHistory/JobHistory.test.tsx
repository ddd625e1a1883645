import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { JobHistory } from './JobHistory';
import { useJobHistory } from '../../hooks/useJobHistory';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import { eventFactory, makeJob } from '../../__testUtils__/fixtures';
import { renderWithApis } from '../../__testUtils__/renderWithApis';

function Harness() {
  return <JobHistory history={useJobHistory('component:default/shop', 2)} />;
}

describe('JobHistory', () => {
  it('names a reclaim of Released volumes as such, and its outcome as a reclaim', async () => {
    const api = new FakePvcPrunerApi();
    const volume = { name: 'pvc-1', uid: 'pv-uid-1' };
    api.jobs = [
      makeJob({
        id: 'r',
        kind: 'reclaim',
        statefulSet: 'db',
        pvcs: [volume],
        summary: {
          deleted: [
            {
              ...volume,
              bytes: 2 ** 30,
              volume: {
                name: 'pvc-1',
                reclaimPolicy: 'Delete',
                fate: 'deleted',
              },
            },
          ],
          terminating: [],
          skipped: [],
          failed: [],
          bytesReclaimed: 2 ** 30,
        },
      }),
    ];
    await renderWithApis(<Harness />, { api });
    expect(
      await screen.findByText('1 Released volume of claims in shop in prod'),
    ).toBeInTheDocument();
    expect(screen.getByText('Volume reclaim')).toBeInTheDocument();
    await userEvent.click(screen.getByText('Volume reclaim'));
    expect(await screen.findByText('Reclaim finished')).toBeInTheDocument();
  });

  it('pages back through older jobs', async () => {
    const api = new FakePvcPrunerApi();
    api.jobs = [
      makeJob({ id: 'a', statefulSet: 'db' }),
      makeJob({
        id: 'b',
        statefulSet: 'cache',
        status: 'aborted',
        reason: 'scaled',
      }),
      makeJob({ id: 'c', statefulSet: 'queue', status: 'interrupted' }),
    ];
    await renderWithApis(<Harness />, { api });
    expect(await screen.findByText('shop/db in prod')).toBeInTheDocument();
    expect(screen.getByText('Aborted')).toBeInTheDocument();
    expect(screen.queryByText('shop/queue in prod')).not.toBeInTheDocument();
    await userEvent.click(
      screen.getByRole('button', { name: 'Load older prunes' }),
    );
    expect(await screen.findByText('shop/queue in prod')).toBeInTheDocument();
    expect(screen.getByText('Interrupted')).toBeInTheDocument();
    expect(
      screen.queryByRole('button', { name: 'Load older prunes' }),
    ).not.toBeInTheDocument();
  });

  it('says in the history line that a job left claims terminating', async () => {
    const api = new FakePvcPrunerApi();
    const claim = (name: string) => ({ name, uid: name });
    api.jobs = [
      makeJob({
        id: 'a',
        status: 'incomplete',
        reason:
          'Not everything was reclaimed: data-db-3 is still terminating, held by acc.example/backup-hold',
        summary: {
          deleted: [claim('data-db-2')],
          terminating: [
            { ...claim('data-db-3'), finalizers: ['acc.example/backup-hold'] },
          ],
          skipped: [],
          failed: [],
          bytesReclaimed: 0,
        },
      }),
    ];
    await renderWithApis(<Harness />, { api });
    expect(await screen.findByText('Incomplete')).toBeInTheDocument();
    expect(
      screen.getByText('1 deleted, 1 still terminating, 0 skipped, 0 failed'),
    ).toBeInTheDocument();
  });

  it('replays a finished job’s events when opened', async () => {
    const api = new FakePvcPrunerApi();
    api.jobs = [
      makeJob({
        id: 'a',
        status: 'aborted',
        reason: 'the StatefulSet was deleted',
      }),
    ];
    const event = eventFactory('a');
    api.emit(
      event('job-started', { message: 'Prune started on cluster prod' }),
      event('job-finished', { status: 'aborted' }),
    );
    await renderWithApis(<Harness />, { api });
    await userEvent.click(await screen.findByText('shop/db in prod'));
    const region = screen.getByRole('region', { name: 'Prune history' });
    expect(
      await within(region).findByText('Prune started on cluster prod'),
    ).toBeInTheDocument();
    expect(
      within(region).getByText('Prune aborted: the StatefulSet was deleted'),
    ).toBeInTheDocument();
    expect(api.streamed).toEqual([{ jobId: 'a', after: 0 }]);
  });

  it('names an automatic prune by the annotation it acted on, not by the plugin’s principal', async () => {
    const api = new FakePvcPrunerApi();
    api.jobs = [
      makeJob({
        id: 'auto',
        requestedBy: 'plugin:pvc-pruner',
        onBehalfOf: 'component:default/shop',
        automaticRunId: 'run-1',
      }),
      makeJob({ id: 'manual', statefulSet: 'cache' }),
    ];
    await renderWithApis(<Harness />, { api });
    expect(
      await screen.findByText(
        /^automatic, per the entity's auto-prune annotation, on behalf of component:default\/shop,$/,
      ),
    ).toBeInTheDocument();
    expect(screen.getByText(/^by user:default\/guest,$/)).toBeInTheDocument();
    expect(screen.queryByText(/plugin:pvc-pruner/)).not.toBeInTheDocument();
  });

  it('says when there is no history', async () => {
    await renderWithApis(<Harness />, { api: new FakePvcPrunerApi() });
    expect(
      await screen.findByText('No prunes or dry runs yet.'),
    ).toBeInTheDocument();
  });
});
