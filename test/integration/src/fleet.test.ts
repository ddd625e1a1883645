import { mockServices } from '@backstage/backend-test-utils';
import type {
  FleetResponse,
  FleetStatefulSet,
} from 'backstage-plugin-pvc-pruner-common';
import type { KubeSim } from 'kube-sim';
import {
  ALICE,
  BOB,
  component,
  ORDERS_REF,
  Pruner,
  startPruner,
  startSim,
  statefulSetIn,
  statefulSetObjects,
} from './__testUtils__/harness';

jest.setTimeout(30000);

const SEARCH_REF = 'component:default/search';

/**
 * The fleet view over HTTP against the demo cluster, with a permission
 * service that lets bob read only the search entity and not see unowned
 * StatefulSets, as a policy of another team would.
 */
describe('the fleet view of the demo cluster over HTTP', () => {
  let sim: KubeSim;
  let pruner: Pruner;
  const asked: Array<{ user: string; requests: number }> = [];

  beforeAll(async () => {
    sim = await startSim(
      statefulSetObjects({
        name: 'orphan-maker',
        namespace: 'search',
        kubernetesId: 'nobody-maps-this',
        replicas: 1,
        orphanOrdinals: [1, 2, 3],
      }),
    );
    const permissions = mockServices.permissions.mock();
    permissions.authorize.mockImplementation(async (requests, options) => {
      const user = (options.credentials.principal as { userEntityRef?: string })
        .userEntityRef;
      asked.push({ user: user ?? 'service', requests: requests.length });
      return requests.map(r => {
        const ref = 'resourceRef' in r ? r.resourceRef : undefined;
        const allowed = user === BOB ? ref === SEARCH_REF : true;
        // AuthorizeResult.ALLOW and .DENY, as the permission framework answers them.
        return { result: allowed ? 'ALLOW' : 'DENY' };
      }) as any;
    });
    pruner = await startPruner({
      sim,
      entities: [
        {
          ...component('orders'),
          spec: { type: 'service', owner: 'group:default/checkout' },
        },
        {
          ...component('search', 'search-index', {
            'backstage.io/kubernetes-namespace': 'search',
          }),
          spec: { type: 'service', owner: 'group:default/search' },
        },
        component('cart'),
      ],
      pvcPruner: {
        pricing: {
          currency: 'EUR',
          storageClasses: { standard: 0.1, 'premium-retain': 0.2 },
        },
      },
      features: [permissions.factory],
    });
  });

  afterAll(async () => {
    await pruner?.stop();
    await sim?.close();
  });

  const fleetOf = async (user: string, query = '') => {
    const res = await pruner.get<FleetResponse>(`/v1/fleet${query}`, user);
    if (res.status !== 200)
      throw new Error(`fleet answered ${res.status}: ${res.text}`);
    return res.body;
  };

  it('sums what each readable entity could reclaim, with the same figures as its card, and the unowned StatefulSets', async () => {
    asked.length = 0;
    const fleet = await fleetOf(ALICE);

    // One batch: orphans.read on each entity, and the two basic permissions of the Unowned section.
    expect(asked).toEqual([{ user: ALICE, requests: 5 }]);
    expect(fleet.items.map(e => e.entityRef)).toEqual([ORDERS_REF, SEARCH_REF]);
    expect(fleet.owners.map(o => o.owner)).toEqual([
      'group:default/checkout',
      'group:default/search',
    ]);
    const card = statefulSetIn(await pruner.scan(), 'shop', 'orders-db');
    const row = fleet.items[0].statefulSets[0];
    expect(row).toEqual<FleetStatefulSet>({
      cluster: 'demo',
      namespace: 'shop',
      name: 'orders-db',
      orphans: card.orphans.length,
      reclaimableBytes: card.reclaimableBytes,
      retainedBytes: card.retainedBytes,
      reclaimableMonthlyCost: card.reclaimableMonthlyCost,
      retainedMonthlyCost: card.retainedMonthlyCost,
      firstSeenOrphanedAt: card.firstSeenOrphanedAt,
    });
    expect(card.reclaimableMonthlyCost).toBeCloseTo(
      (card.reclaimableBytes / 2 ** 30) * 0.1,
    );
    expect(
      fleet.unowned!.statefulSets.map(s => `${s.namespace}/${s.name}`),
    ).toEqual([
      'payments/ledger-db',
      'search/nightly-reports',
      'search/orphan-maker',
    ]);
    expect(fleet.pricing).toEqual({
      currency: 'EUR',
      unpricedStorageClasses: [],
    });
  });

  it('shows a user of the other team nothing of the entities they may not read, nor the unowned', async () => {
    const fleet = await fleetOf(BOB);
    const text = JSON.stringify(fleet);

    expect(fleet.items.map(e => e.entityRef)).toEqual([SEARCH_REF]);
    expect(text).not.toContain('orders');
    expect(text).not.toContain('checkout');
    expect(text).not.toContain('orphan-maker');
    expect(fleet.unowned).toBeUndefined();
    expect(fleet.totals).toEqual({
      entities: 1,
      statefulSets: 1,
      ...fleet.items[0].totals,
    });
    expect(fleet.entitiesScanned).toBe(1);
  });

  it('filters by namespace and owner, and refuses a cluster that is not configured', async () => {
    const search = await fleetOf(ALICE, '?namespace=search');
    expect(search.items.map(e => e.entityRef)).toEqual([SEARCH_REF]);
    expect(search.unowned!.statefulSets.map(s => s.name)).toEqual([
      'nightly-reports',
      'orphan-maker',
    ]);
    const checkout = await fleetOf(ALICE, '?owner=checkout');
    expect(checkout.items.map(e => e.entityRef)).toEqual([ORDERS_REF]);
    expect(checkout.unowned).toBeUndefined();

    const bad = await pruner.get('/v1/fleet?cluster=prod', ALICE);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe(
      'Unknown cluster "prod": the configured clusters are "demo"',
    );
  });
});
