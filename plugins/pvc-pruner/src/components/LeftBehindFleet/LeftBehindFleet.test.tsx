import { screen, within } from '@testing-library/react';
import { FleetResponse } from 'backstage-plugin-pvc-pruner-common';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import { renderWithApis } from '../../__testUtils__/renderWithApis';
import { LeftBehindFleet } from './LeftBehindFleet';

const GiB = 2 ** 30;
const totals = (orphans: number, bytes: number, cost: number) => ({
  orphans,
  reclaimableBytes: bytes,
  retainedBytes: 0,
  reclaimableMonthlyCost: cost,
  retainedMonthlyCost: 0,
});
const row = (name: string, orphans: number) => ({
  cluster: 'prod',
  namespace: 'shop',
  name,
  evidence: 'lineage' as const,
  ...totals(orphans, orphans * 20 * GiB, orphans * 2),
});

const fleet: FleetResponse = {
  clusters: [{ cluster: 'prod', ok: true }],
  entitiesScanned: 2,
  totals: {
    entities: 1,
    statefulSets: 0,
    ...totals(0, 0, 0),
    leftBehind: totals(3, 60 * GiB, 6),
  },
  owners: [
    {
      owner: 'group:default/checkout',
      entities: 1,
      totals: totals(0, 0, 0),
      leftBehind: totals(3, 60 * GiB, 6),
    },
  ],
  items: [
    {
      entityRef: 'component:default/orders',
      owner: 'group:default/checkout',
      statefulSets: [],
      totals: totals(0, 0, 0),
      leftBehind: {
        statefulSets: [row('invoices-db', 3)],
        totals: totals(3, 60 * GiB, 6),
      },
    },
  ],
  unowned: {
    statefulSets: [],
    totals: totals(0, 0, 0),
    prunable: false,
    leftBehind: {
      statefulSets: [row('stray-db', 1)],
      totals: totals(1, 20 * GiB, 2),
    },
  },
};

describe('LeftBehindFleet', () => {
  it('lists the unowned claims of deleted StatefulSets, how they are known and their total; those of entities are in the owner table', async () => {
    await renderWithApis(<LeftBehindFleet fleet={fleet} currency="USD" />, {
      api: new FakePvcPrunerApi(),
    });
    const section = screen.getByRole('region', {
      name: 'Unowned claims of deleted StatefulSets',
    });
    expect(section).toHaveTextContent('1 claim · 20 GiB · $2.00');
    const rows = within(section).getAllByRole('row');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toHaveTextContent('prod / shop / stray-db');
    expect(rows[1]).toHaveTextContent('recorded (lineage)');
    expect(section).not.toHaveTextContent('invoices-db');
  });

  it('shows nothing when no deleted StatefulSet left claims', async () => {
    const { totals: t, unowned: _u, ...rest } = fleet;
    const { leftBehind: _l, ...plain } = t;
    await renderWithApis(
      <LeftBehindFleet fleet={{ ...rest, totals: plain }} />,
      { api: new FakePvcPrunerApi() },
    );
    expect(
      screen.queryByRole('region', {
        name: 'Unowned claims of deleted StatefulSets',
      }),
    ).not.toBeInTheDocument();
  });
});
