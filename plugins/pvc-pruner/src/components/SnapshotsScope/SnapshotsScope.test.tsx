import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { OrphanedVolumes } from '../OrphanedVolumes';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import {
  GiB,
  makeJob,
  makeKeptSnapshot,
  makeProdResponse,
  makeSnapshotsResponse,
  makeStatefulSet,
} from '../../__testUtils__/fixtures';
import { renderWithApis } from '../../__testUtils__/renderWithApis';
import { responseError } from '../../__testUtils__/responseError';

/** A card whose backend has snapshots on and keeps `snapshots` of prod's shop/db. */
function cardApi(...snapshots: ReturnType<typeof makeKeptSnapshot>[]) {
  const api = new FakePvcPrunerApi();
  api.orphans = async () => ({
    ...makeProdResponse(makeStatefulSet('db', { orphans: [] })),
    snapshots: { enabled: true, retentionDays: 7, required: true },
  });
  api.snapshots = async () => makeSnapshotsResponse(...snapshots);
  return api;
}

const renderCard = (api: FakePvcPrunerApi, deny: string[] = []) =>
  renderWithApis(
    <OrphanedVolumes
      entityRef="component:default/shop"
      title="Orphaned volumes"
      pruneDeniedReason={
        deny.length > 0
          ? 'You may not prune shop (pvc-pruner.prune)'
          : undefined
      }
    />,
    { api, deny },
  );

describe('the card’s snapshots', () => {
  it('lists each kept snapshot per StatefulSet with its claim, size, age, expiry and cost', async () => {
    const api = cardApi(
      makeKeptSnapshot({ monthlyCost: 1 }),
      makeKeptSnapshot({
        name: 'data-db-3-0a1b2c3d',
        uid: 'snap-uid-2',
        claimName: 'data-db-3',
        readyToUse: false,
        restorable: false,
        notRestorable: 'not ready to use yet',
        restoreBytes: undefined,
      }),
    );
    const base = api.snapshots;
    api.snapshots = async (...args) => ({
      ...(await base(...args)),
      totals: { snapshots: 2, bytes: 20 * GiB, monthlyCost: 1 },
      pricing: { currency: 'USD', unpricedStorageClasses: [] },
    });
    await renderCard(api);
    const list = await screen.findByRole('region', {
      name: 'Snapshots of shop/db',
    });
    const rows = within(list).getAllByRole('row');
    expect(rows[1]).toHaveTextContent('data-db-2');
    expect(rows[1]).toHaveTextContent('20 GiB · $1.00 a month');
    expect(rows[1]).toHaveTextContent('Ready');
    expect(rows[2]).toHaveTextContent('Not ready yet');
    expect(
      within(rows[2]).getByRole('button', { name: /Restore data-db-3/ }),
    ).toBeDisabled();
    expect(
      screen.getByText(/2 snapshots kept · 20 GiB · \$1\.00 a month/),
    ).toBeInTheDocument();
  });

  it('restores after asking, then says how to bring the claim back and reloads the card', async () => {
    const api = cardApi(makeKeptSnapshot());
    let orphanReads = 0;
    const orphans = api.orphans;
    api.orphans = async (...args) => {
      orphanReads += 1;
      return orphans(...args);
    };
    api.restore = async request => ({
      claim: { name: 'data-db-2', namespace: 'shop', uid: 'new-uid' },
      snapshot: request.snapshot.name,
      statefulSet: 'db',
      requested: '20Gi',
      reattachesAtReplicas: 3,
      message: 'scale db to 3 replicas to bring it back',
    });
    await renderCard(api);
    await userEvent.click(
      await screen.findByRole('button', {
        name: 'Restore data-db-2 from data-db-2-0a1b2c3d',
      }),
    );
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Restore data-db-2?');
    const readsBefore = orphanReads;
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Restore data-db-2' }),
    );
    expect(
      await screen.findByText(
        'Restored data-db-2 from data-db-2-0a1b2c3d: scale db to 3 replicas to bring it back.',
      ),
    ).toBeInTheDocument();
    expect(api.restores).toEqual([
      {
        entityRef: 'component:default/shop',
        cluster: 'prod',
        namespace: 'shop',
        statefulSet: 'db',
        snapshot: { name: 'data-db-2-0a1b2c3d', uid: 'snap-uid-1' },
      },
    ]);
    await waitFor(() => expect(orphanReads).toBeGreaterThan(readsBefore));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('keeps the dialog open with the backend’s reason when a restore is refused', async () => {
    const api = cardApi(makeKeptSnapshot());
    api.restore = async () => {
      throw await responseError(
        409,
        'ConflictError',
        'A claim named data-db-2 already exists in shop: delete it first, or restore elsewhere',
      );
    };
    await renderCard(api);
    await userEvent.click(
      await screen.findByRole('button', { name: /Restore data-db-2 from/ }),
    );
    const dialog = await screen.findByRole('dialog');
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Restore data-db-2' }),
    );
    expect(await within(dialog).findByRole('alert')).toHaveTextContent(
      'A claim named data-db-2 already exists in shop',
    );
  });

  it('keeps a snapshot until the chosen day', async () => {
    const api = cardApi(makeKeptSnapshot());
    api.keep = async () =>
      makeKeptSnapshot({ keepUntil: '2026-12-20T23:59:59.000Z' });
    await renderCard(api);
    await userEvent.click(
      await screen.findByRole('button', {
        name: 'Keep data-db-2-0a1b2c3d longer',
      }),
    );
    const dialog = await screen.findByRole('dialog');
    const input = within(dialog).getByLabelText('Keep until');
    await userEvent.clear(input);
    await userEvent.type(input, '2026-12-20');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Keep' }));
    await waitFor(() =>
      expect(api.keeps).toEqual([
        {
          snapshot: {
            entityRef: 'component:default/shop',
            cluster: 'prod',
            namespace: 'shop',
            statefulSet: 'db',
            snapshot: { name: 'data-db-2-0a1b2c3d', uid: 'snap-uid-1' },
          },
          keepUntil: '2026-12-20T23:59:59.000Z',
        },
      ]),
    );
  });

  it('offers no restore or keep to a user who may not prune', async () => {
    await renderCard(cardApi(makeKeptSnapshot()), ['pvc-pruner.prune']);
    expect(
      await screen.findByRole('button', { name: /Restore data-db-2 from/ }),
    ).toBeDisabled();
    expect(
      screen.getByRole('button', { name: /Keep data-db-2-0a1b2c3d longer/ }),
    ).toBeDisabled();
  });

  it('offers Restore in the prune history for a snapshot the cluster still has, and not for one deleted by hand', async () => {
    const api = cardApi(makeKeptSnapshot());
    const outcome = (name: string, uid: string) => ({
      name,
      uid: `uid-${name}`,
      bytes: 20 * GiB,
      snapshot: {
        name: `${name}-0a1b2c3d`,
        uid,
        expiresAt: '2026-12-07T10:00:03.000Z',
      },
    });
    api.jobs = [
      makeJob({
        summary: {
          deleted: [
            outcome('data-db-2', 'snap-uid-1'),
            outcome('data-db-3', 'gone'),
          ],
          terminating: [],
          skipped: [],
          failed: [],
          bytesReclaimed: 40 * GiB,
        },
      }),
    ];
    await renderCard(api);
    const history = await screen.findByRole('region', {
      name: 'Prune history',
    });
    await userEvent.click(await within(history).findByText('shop/db in prod'));
    const snapshots = await within(history).findByRole('list', {
      name: 'Snapshots',
    });
    const items = within(snapshots).getAllByRole('listitem');
    expect(
      within(items[0]).getByRole('button', { name: /Restore data-db-2/ }),
    ).toBeEnabled();
    expect(within(items[1]).queryByRole('button')).not.toBeInTheDocument();
  });
});
