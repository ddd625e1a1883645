import { act, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { PruneOutcome } from '../PruneOutcome';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import { eventFactory, makeReleasedVolume } from '../../__testUtils__/fixtures';
import { renderWithApis } from '../../__testUtils__/renderWithApis';

const SEARCH = 'component:default/search';

/** A prune's outcome whose two claims left their Retain volumes pvc-1 and pvc-2 Released. */
function retainedPrune(dryRun = false) {
  return (
    <PruneOutcome
      dryRun={dryRun}
      status="succeeded"
      entityRef={SEARCH}
      summary={{
        deleted: [1, 2].map(n => ({
          name: `data-search-index-${n}`,
          uid: `claim-uid-${n}`,
          bytes: 100 * 2 ** 30,
          volume: {
            name: `pvc-${n}`,
            reclaimPolicy: 'Retain',
            fate: 'released',
          },
        })),
        terminating: [],
        skipped: [],
        failed: [],
        bytesReclaimed: 0,
      }}
    />
  );
}

function apiListing(...volumes: ReturnType<typeof makeReleasedVolume>[]) {
  const api = new FakePvcPrunerApi();
  api.releasedVolumes = async () => ({
    items: volumes,
    truncated: false,
    totals: { volumes: volumes.length, bytes: 0 },
    errors: [],
  });
  return api;
}

describe('Also reclaim these volumes, after a prune of Retain claims', () => {
  it('offers the Released volumes of the prune, dry run first, then reclaims them and follows the job', async () => {
    const api = apiListing(
      makeReleasedVolume(1),
      makeReleasedVolume(2),
      // Another prune's volume: not offered here.
      makeReleasedVolume(9),
    );
    api.nextJobId = 'reclaim-1';
    await renderWithApis(retainedPrune(), { api });

    await userEvent.click(
      await screen.findByRole('button', { name: 'Also reclaim these volumes' }),
    );
    const dialog = screen.getByRole('dialog');
    expect(
      within(dialog)
        .getAllByRole('listitem')
        .map(li => li.textContent),
    ).toEqual([
      expect.stringContaining('pvc-1 — 100 GiB on premium-retain'),
      expect.stringContaining('pvc-2 — 100 GiB on premium-retain'),
    ]);
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Dry run' }),
    );
    expect(api.reclaims).toEqual([
      {
        cluster: 'demo',
        namespace: 'search',
        entityRef: SEARCH,
        dryRun: true,
        volumes: [1, 2].map(n => ({
          name: `pvc-${n}`,
          uid: `pv-uid-${n}`,
          resourceVersion: `${100 + n}`,
          claimUid: `claim-uid-${n}`,
        })),
      },
    ]);
    const event = eventFactory('reclaim-1');
    act(() =>
      api.emit(
        event('volume-deleted', {
          pvc: 'pvc-1',
          message: 'Dry run: pvc-1 would be reclaimed',
        }),
        event('job-finished', {
          status: 'succeeded',
          message:
            'Dry run of reclaiming succeeded: 2 would be reclaimed, 0 skipped, 0 failed',
        }),
      ),
    );
    expect(await within(dialog).findByRole('status')).toHaveTextContent(
      'Dry run of reclaiming succeeded: 2 would be reclaimed, 0 skipped, 0 failed',
    );
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Reclaim 200 GiB' }),
    );
    expect(api.reclaims[1]).toMatchObject({ dryRun: false });
  });

  it('offers nothing to a user who may not reclaim them, and says why', async () => {
    const api = apiListing(
      makeReleasedVolume(1, {
        canReclaim: false,
        reason:
          'reclaiming it needs pvc-pruner.volumes.reclaim on every entity its claim belonged to, and you lack it on component:default/search',
      }),
    );
    await renderWithApis(retainedPrune(), { api });

    expect(
      await screen.findByText(
        /pvc-1 is not offered: reclaiming it needs pvc-pruner.volumes.reclaim/,
      ),
    ).toBeInTheDocument();
    expect(
      screen.queryByRole('button', { name: 'Also reclaim these volumes' }),
    ).not.toBeInTheDocument();
  });

  it('says a statically provisioned volume would leave its disk, and offers no action for it', async () => {
    const api = apiListing(
      makeReleasedVolume(1, {
        reclaimable: false,
        canReclaim: false,
        reason:
          'statically provisioned (no pv.kubernetes.io/provisioned-by annotation): no provisioner deletes its disk, and deleting the PersistentVolume object would leave the disk',
      }),
    );
    await renderWithApis(retainedPrune(), { api });

    expect(
      await screen.findByText(
        /deleting the PersistentVolume object would leave the disk/,
      ),
    ).toBeInTheDocument();
    expect(screen.queryByRole('button')).not.toBeInTheDocument();
  });

  it('offers nothing after a dry run of the prune: no volume was released', async () => {
    const api = apiListing(makeReleasedVolume(1));
    const listed = jest.spyOn(api, 'listReleasedVolumes');
    await renderWithApis(retainedPrune(true), { api });
    expect(await screen.findByText('Dry run finished')).toBeInTheDocument();
    expect(listed).not.toHaveBeenCalled();
  });

  it('reads the list again when the watch cache has not seen the volumes Released yet', async () => {
    const api = apiListing(makeReleasedVolume(1), makeReleasedVolume(2));
    const later = api.releasedVolumes;
    let calls = 0;
    api.releasedVolumes = async ref =>
      ++calls === 1
        ? {
            items: [],
            truncated: false,
            totals: { volumes: 0, bytes: 0 },
            errors: [],
          }
        : later(ref);
    await renderWithApis(retainedPrune(), { api });
    expect(
      await screen.findByRole(
        'button',
        { name: 'Also reclaim these volumes' },
        { timeout: 3000 },
      ),
    ).toBeInTheDocument();
    expect(calls).toBe(2);
  });
});
