import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import {
  TestApiProvider,
  mockApis,
  renderInTestApp,
} from '@backstage/test-utils';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import { entityRouteRef } from '@backstage/plugin-catalog-react';
import {
  FleetResponse,
  FleetStatefulSet,
} from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerApiRef } from '../../api/PvcPrunerApi';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import {
  makeReleasedVolume,
  makeStatefulSet,
} from '../../__testUtils__/fixtures';
import { FleetView } from './FleetView';

// Material UI tables in jsdom are slow on a busy machine.
jest.setTimeout(30000);

const GIB = 2 ** 30;
const DAY = 86400_000;
const daysAgo = (n: number) =>
  new Date(Date.now() - n * DAY - 60_000).toISOString();

function sts(
  cluster: string,
  name: string,
  gib: number,
  cost?: number,
  firstSeen?: string,
): FleetStatefulSet {
  return {
    cluster,
    namespace: 'shop',
    name,
    orphans: 2,
    reclaimableBytes: gib * GIB,
    retainedBytes: 0,
    ...(cost !== undefined
      ? { reclaimableMonthlyCost: cost, retainedMonthlyCost: 0 }
      : {}),
    ...(firstSeen ? { firstSeenOrphanedAt: firstSeen } : {}),
  };
}

const totals = (gib: number, cost?: number, orphans = 2) => ({
  orphans,
  reclaimableBytes: gib * GIB,
  retainedBytes: 0,
  ...(cost !== undefined
    ? { reclaimableMonthlyCost: cost, retainedMonthlyCost: 0 }
    : {}),
});

function pricedFleet(): FleetResponse {
  return {
    clusters: [
      { cluster: 'demo', ok: true },
      { cluster: 'edge', ok: true },
    ],
    entitiesScanned: 3,
    totals: {
      entities: 2,
      statefulSets: 2,
      ...totals(130, 13, 4),
      snapshots: { snapshots: 3, bytes: 60 * 2 ** 30, monthlyCost: 3 },
    },
    owners: [
      {
        owner: 'group:default/checkout',
        entities: 1,
        totals: totals(30, 3),
        firstSeenOrphanedAt: daysAgo(27),
      },
      { owner: 'group:default/search', entities: 1, totals: totals(100, 10) },
    ],
    items: [
      {
        entityRef: 'component:default/orders',
        owner: 'group:default/checkout',
        statefulSets: [sts('demo', 'orders-db', 30, 3, daysAgo(27))],
        totals: totals(30, 3),
        firstSeenOrphanedAt: daysAgo(27),
      },
      {
        entityRef: 'component:default/search-index',
        title: 'Search index',
        owner: 'group:default/search',
        statefulSets: [sts('edge', 'search-index', 100, 10)],
        totals: totals(100, 10),
      },
    ],
    unowned: {
      statefulSets: [sts('edge', 'legacy-db', 8, 0.8)],
      totals: totals(8, 0.8),
      prunable: false,
    },
    pricing: { currency: 'USD', unpricedStorageClasses: [] },
  };
}

async function render(api: FakePvcPrunerApi) {
  return renderInTestApp(
    <TestApiProvider
      apis={[
        [pvcPrunerApiRef, api],
        [permissionApiRef, mockApis.permission()],
      ]}
    >
      <FleetView />
    </TestApiProvider>,
    { mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef } },
  );
}

/** Names in the first column, top to bottom. */
const rowNames = (table: HTMLElement) =>
  within(table)
    .getAllByRole('row')
    .slice(1)
    .map(r => within(r).getAllByRole('cell')[0].textContent);

/** Clicks a column's sort button: the first click sorts by it, the next reverses. */
const sortBy = (table: HTMLElement, column: string) =>
  userEvent.click(within(table).getByRole('button', { name: column }));

/** The owner table, once it has rendered. */
const ownerTable = () =>
  screen.findByRole('table', { name: 'Reclaimable storage by owner' });

/** Renders the fleet view on a fake API that answers pricedFleet(). */
async function renderPricedFleet() {
  const api = new FakePvcPrunerApi();
  api.fleet = async () => pricedFleet();
  return { api, ...(await render(api)) };
}

describe('FleetView', () => {
  it("counts the claims of deleted StatefulSets in their owner's and entity's rows, marked as their own kind, and lists an entity that has only those", async () => {
    const api = new FakePvcPrunerApi();
    const leftBehind = {
      ...sts('demo', 'promotions-db', 20, 3.4),
      evidence: 'lineage' as const,
    };
    api.fleet = async () => {
      const fleet = pricedFleet();
      return {
        ...fleet,
        totals: { ...fleet.totals, entities: 3, leftBehind: totals(20, 3.4) },
        owners: fleet.owners.map(o =>
          o.owner === 'group:default/checkout'
            ? { ...o, entities: 2, leftBehind: totals(20, 3.4) }
            : o,
        ),
        items: [
          ...fleet.items,
          {
            entityRef: 'component:default/cart',
            owner: 'group:default/checkout',
            statefulSets: [],
            totals: totals(0, 0, 0),
            leftBehind: {
              statefulSets: [leftBehind],
              totals: totals(20, 3.4),
            },
          },
        ],
      };
    };
    await render(api);
    const table = await ownerTable();
    const checkout = within(table)
      .getAllByRole('row')
      .slice(1)
      .find(r => within(r).getAllByRole('cell')[0].textContent === 'checkout')!;
    expect(checkout).toHaveTextContent('+ 2 left behind');
    expect(checkout).toHaveTextContent('+ 20 GiB of deleted StatefulSets');
    expect(checkout).toHaveTextContent(
      '+ $3.40 a month of deleted StatefulSets',
    );
    expect(rowNames(table)).toEqual(
      expect.arrayContaining([
        'cart',
        expect.stringMatching(
          /^demo · shop\/promotions-db\s*deleted StatefulSet · its claims, as recorded/,
        ),
      ]),
    );
    expect(
      screen.getByText(/Claims of deleted StatefulSets/, { selector: 'strong' })
        .parentElement,
    ).toHaveTextContent(
      /2 claims · 20 GiB · \$3\.40 a month · apart from the orphans above/,
    );
    const csv = decodeURIComponent(
      screen
        .getByRole('link', { name: /Download CSV/ })
        .getAttribute('href')!
        .replace('data:text/csv;charset=utf-8,', ''),
    ).split('\n');
    expect(csv).toContainEqual(
      expect.stringMatching(
        /^group:default\/checkout,component:default\/cart,demo,shop,promotions-db,2,20\.00,.*,left-behind$/,
      ),
    );
  });

  it('groups by owner with each entity and its StatefulSets, totals in GiB and money, and links to the Kubernetes page', async () => {
    const { api } = await renderPricedFleet();

    const table = await ownerTable();
    // Most expensive first by default when priced.
    expect(rowNames(table)).toEqual([
      'search',
      'Search index',
      'edge · shop/search-index',
      'checkout',
      'orders',
      'demo · shop/orders-db',
    ]);
    expect(screen.getByRole('link', { name: 'orders' })).toHaveAttribute(
      'href',
      '/catalog/default/component/orders/kubernetes',
    );
    expect(within(table).getAllByText('$10.00 a month')).toHaveLength(3);
    expect(
      within(table).getAllByText(/seen orphaned since .* \(at least 27 days\)/),
    ).toHaveLength(3);
    expect(
      screen.getByText(/2 entities with orphans, of 3 you may read/),
    ).toBeInTheDocument();
    expect(screen.getByText('130 GiB')).toBeInTheDocument();
    expect(screen.getByText('$13.00 a month')).toBeInTheDocument();
    expect(
      screen.getByText(
        'Kept snapshots (the undo window of past prunes): 3 snapshots · 60 GiB · $3.00 a month, billed apart from the claims until they expire',
      ),
    ).toBeInTheDocument();
    expect(api.fleetRequests).toEqual([{ limit: 500 }]);
  });

  it('says where the Retain volumes’ cost goes: into Released volumes once pruned, and to 0 once reclaimed there', async () => {
    const api = new FakePvcPrunerApi();
    const fleet = pricedFleet();
    fleet.totals = {
      ...fleet.totals,
      retainedBytes: 200 * GIB,
      retainedMonthlyCost: 34,
    };
    api.fleet = async () => fleet;
    api.releasedVolumes = async () => ({
      items: [makeReleasedVolume(2), makeReleasedVolume(3)],
      truncated: false,
      totals: { volumes: 2, bytes: 200 * GIB, monthlyCost: 34 },
      errors: [],
    });
    await render(api);

    expect(
      await screen.findByText(/plus 200 GiB on Retain volumes/, {
        selector: 'p',
      }),
    ).toHaveTextContent(
      'plus 200 GiB on Retain volumes ($34.00 a month): a prune leaves their disks billed, under Released volumes below, until you reclaim them there',
    );
    expect(
      await screen.findByText(/still billed until reclaimed/),
    ).toHaveTextContent(
      '2 Released volumes · 200 GiB ($34.00 a month) still billed until reclaimed. Pruned claims on Retain volumes land here; reclaiming brings this to 0.',
    );
  });

  it('sorts by storage, cost and first sighting, both ways', async () => {
    await renderPricedFleet();
    const table = await ownerTable();
    await sortBy(table, 'Seen orphaned');
    expect(rowNames(table)[0]).toBe('checkout');
    await sortBy(table, 'Seen orphaned');
    expect(rowNames(table)[0]).toBe('search');
    await sortBy(table, 'Reclaimable storage');
    expect(rowNames(table)[0]).toBe('search');
    await sortBy(table, 'Reclaimable storage');
    expect(rowNames(table)[0]).toBe('checkout');
  });

  it('offers a CSV of exactly the rows shown, in their order', async () => {
    await renderPricedFleet();
    const link = await screen.findByRole('link', { name: /Download CSV/ });
    expect(link).toHaveAttribute('download', 'pvc-pruner-fleet.csv');
    const csv = decodeURIComponent(
      link.getAttribute('href')!.replace('data:text/csv;charset=utf-8,', ''),
    );
    expect(
      csv.split('\n').map(l => l.split(',').slice(0, 5).join(',')),
    ).toEqual([
      'owner,entity,cluster,namespace,statefulset',
      'group:default/search,component:default/search-index,edge,shop,search-index',
      'group:default/checkout,component:default/orders,demo,shop,orders-db',
      '(unowned),,edge,shop,legacy-db',
      '',
    ]);
  });

  it('asks the backend for a filter, and shows its answer', async () => {
    const api = new FakePvcPrunerApi();
    api.fleet = async request => {
      const fleet = pricedFleet();
      if (request.owner !== 'group:default/checkout') return fleet;
      return {
        ...fleet,
        owners: [fleet.owners[0]],
        items: [fleet.items[0]],
        totals: { entities: 1, statefulSets: 1, ...totals(30, 3) },
        unowned: undefined,
      };
    };
    await render(api);
    await ownerTable();
    await userEvent.click(screen.getByRole('button', { name: 'Owner' }));
    await userEvent.click(
      await screen.findByRole('option', { name: 'group:default/checkout' }),
    );
    await waitFor(() =>
      expect(screen.queryByText('Search index')).not.toBeInTheDocument(),
    );
    expect(api.fleetRequests).toContainEqual({
      owner: 'group:default/checkout',
      limit: 500,
    });
    expect(
      screen.queryByRole('region', { name: 'Unowned' }),
    ).not.toBeInTheDocument();
  });

  it('says what automatic pruning last did and when it runs next, only when the platform enabled it', async () => {
    const nextRunAt = new Date(Date.now() + 3600_000).toISOString();
    const api = new FakePvcPrunerApi();
    api.fleet = async () => ({
      ...pricedFleet(),
      autoPrune: {
        enabled: true,
        nextRunAt,
        lastRun: {
          id: '4f6c1a52-0000-4000-8000-000000000001',
          startedAt: daysAgo(0),
          status: 'finished',
          considered: 5,
          eligible: 2,
          deleted: 2,
          kept: 1,
          bytesDeleted: 20 * GIB,
        },
      },
    });
    const { unmount } = await render(api);
    expect(
      await screen.findByText(
        /^: last run .*: deleted 2 claims \(20 GiB\), kept 1, eligible 2; next run /,
      ),
    ).toBeInTheDocument();
    unmount();

    const disabled = new FakePvcPrunerApi();
    disabled.fleet = async () => ({
      ...pricedFleet(),
      autoPrune: { enabled: false },
    });
    await render(disabled);
    await ownerTable();
    expect(screen.queryByText(/Automatic pruning/)).not.toBeInTheDocument();
  });

  it('shows the Unowned section only when the backend sends it', async () => {
    const { unmount } = await renderPricedFleet();
    const unowned = await screen.findByRole('region', { name: 'Unowned' });
    expect(
      within(unowned).getByText('edge · shop/legacy-db'),
    ).toBeInTheDocument();
    unmount();

    const other = new FakePvcPrunerApi();
    other.fleet = async () => ({ ...pricedFleet(), unowned: undefined });
    await render(other);
    await ownerTable();
    expect(
      screen.queryByRole('region', { name: 'Unowned' }),
    ).not.toBeInTheDocument();
    expect(screen.queryByText(/legacy-db/)).not.toBeInTheDocument();
  });

  it('offers no prune of unowned StatefulSets without pvc-pruner.unowned.prune, and says what it needs', async () => {
    await renderPricedFleet();
    const unowned = await screen.findByRole('region', { name: 'Unowned' });
    expect(
      within(unowned).getByText(
        /Pruning them here needs pvc-pruner.unowned.prune, which you don't hold/,
      ),
    ).toBeInTheDocument();
    expect(within(unowned).queryByRole('button', { name: /Prune/ })).toBeNull();
  });

  it('with pvc-pruner.unowned.prune, prunes an unowned StatefulSet from its row with the card’s flow', async () => {
    const api = new FakePvcPrunerApi();
    api.fleet = async () => {
      const fleet = pricedFleet();
      return {
        ...fleet,
        unowned: {
          ...fleet.unowned!,
          statefulSets: [
            sts('edge', 'legacy-db', 8, 0.8),
            sts('demo', 'nightly-reports', 4, 0.4),
          ],
          prunable: true,
        },
      };
    };
    api.unownedOrphans = async request => ({
      cluster: request.cluster,
      statefulSet: makeStatefulSet(request.statefulSet, { namespace: 'shop' }),
    });
    await render(api);
    const unowned = await screen.findByRole('region', { name: 'Unowned' });
    expect(
      within(unowned).getAllByRole('button', { name: /^Prune/ }),
    ).toHaveLength(2);
    expect(
      within(await ownerTable()).queryByRole('button', { name: /^Prune/ }),
    ).toBeNull();

    await userEvent.click(
      within(unowned).getByRole('button', {
        name: 'Prune unowned shop/legacy-db in edge',
      }),
    );
    const panel = await screen.findByRole('region', {
      name: 'Prune unowned shop/legacy-db in edge',
    });
    expect(api.unownedRequests).toEqual([
      { cluster: 'edge', namespace: 'shop', statefulSet: 'legacy-db' },
    ]);
    expect(
      await within(panel).findByText('data-legacy-db-2'),
    ).toBeInTheDocument();
    await userEvent.click(
      within(panel).getByRole('button', { name: 'Dry run prune of legacy-db' }),
    );
    await userEvent.click(
      screen.getByRole('button', { name: 'Start dry run' }),
    );
    expect(api.started).toHaveLength(1);
    expect(api.started[0]).not.toHaveProperty('entityRef');
    expect(api.started[0]).toMatchObject({
      cluster: 'edge',
      namespace: 'shop',
      statefulSet: 'legacy-db',
      dryRun: true,
    });
    expect(
      await within(panel).findByRole('region', {
        name: 'Dry run of shop/legacy-db progress',
      }),
    ).toBeInTheDocument();
  });

  it('says which rows share a StatefulSet, in the table and the CSV', async () => {
    const api = new FakePvcPrunerApi();
    api.fleet = async () => {
      const fleet = pricedFleet();
      const [orders, search] = fleet.items;
      return {
        ...fleet,
        items: [
          orders,
          {
            ...search,
            statefulSets: [
              {
                ...search.statefulSets[0],
                sharedWith: ['component:default/borrowed'],
              },
            ],
          },
        ],
      };
    };
    await render(api);
    const table = await ownerTable();
    expect(
      within(table).getByText(
        /Also claimed by .* counted once in owner and fleet totals/,
      ),
    ).toBeInTheDocument();
    expect(
      within(table).getByRole('link', { name: 'component:default/borrowed' }),
    ).toHaveAttribute('href', '/catalog/default/component/borrowed/kubernetes');
    expect(
      screen.getByText(/listed under each of them, and counted once/),
    ).toBeInTheDocument();

    const link = screen.getByRole('link', { name: /Download CSV/ });
    const csv = decodeURIComponent(
      link.getAttribute('href')!.replace('data:text/csv;charset=utf-8,', ''),
    ).split('\n');
    expect(csv[0].split(',').slice(-2)).toEqual(['shared_with', 'kind']);
    expect(csv[1]).toMatch(
      /^group:default\/search,.*,component:default\/borrowed,orphans$/,
    );
    expect(csv[2]).toMatch(/^group:default\/checkout,.*,,orphans$/);
  });

  it('without pricing shows GiB only: no cost column, no amounts', async () => {
    const api = new FakePvcPrunerApi();
    api.fleet = async () => ({
      ...pricedFleet(),
      pricing: undefined,
      owners: [
        { owner: 'group:default/checkout', entities: 1, totals: totals(30) },
      ],
      items: [
        {
          entityRef: 'component:default/orders',
          owner: 'group:default/checkout',
          statefulSets: [sts('demo', 'orders-db', 30)],
          totals: totals(30),
        },
      ],
      totals: { entities: 1, statefulSets: 1, ...totals(30) },
      unowned: undefined,
    });
    await render(api);
    await ownerTable();
    expect(
      screen.queryByRole('button', { name: 'Monthly cost' }),
    ).not.toBeInTheDocument();
    expect(document.body.textContent).not.toMatch(/\$|a month/);
    expect(
      screen.getByText(/Sizes only: set pvcPruner.pricing/),
    ).toBeInTheDocument();
  });
});
