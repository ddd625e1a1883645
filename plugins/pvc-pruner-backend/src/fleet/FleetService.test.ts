import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { Entity } from '@backstage/catalog-model';
import { InputError } from '@backstage/errors';
import type { ClusterDetails } from '@backstage/plugin-kubernetes-node';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  FleetAutoPrune,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { PriceList } from '../cost';
import { OrphanSightingStore } from '../database';
import {
  ClusterScan,
  EntityWorkloadTarget,
  OrphanAnnotator,
  OrphanFinder,
} from '../orphans';
import { FleetQuery, FleetService } from './FleetService';
import {
  NamespaceOwners,
  OwnershipChecks,
  WorkloadCatalog,
} from '../ownership';
import type { V1StatefulSet } from '@kubernetes/client-node';
import {
  GIB,
  orphanedClaim,
  statefulSetReport,
} from '../__testUtils__/orphanReports';
import { componentEntity } from '../__testUtils__/catalogEntities';

const ALICE = 'user:default/alice';

function component(
  name: string,
  owner: string,
  annotations?: Record<string, string>,
): Entity {
  return componentEntity(name, { owner, annotations });
}

const ENTITIES = [
  component('orders', 'checkout'),
  component('cart', 'group:default/checkout'),
  component('search-index', 'search'),
  component('docs', 'search', {}),
];

function sts(
  namespace: string,
  name: string,
  orphanGiB: number[],
  options: { cost?: number; firstSeen?: string } = {},
): StatefulSetOrphans {
  return statefulSetReport(
    namespace,
    name,
    orphanGiB.map((gib, i) =>
      orphanedClaim(
        name,
        i + 1,
        gib,
        options.cost !== undefined ? { monthlyCost: gib * 0.1 } : {},
      ),
    ),
    {
      ...(options.cost !== undefined
        ? { reclaimableMonthlyCost: options.cost, retainedMonthlyCost: 0 }
        : {}),
      ...(options.firstSeen ? { firstSeenOrphanedAt: options.firstSeen } : {}),
    },
  );
}

/** Two clusters: what each entity's selector finds there, and StatefulSets no selector finds. */
const CLUSTERS: Record<
  string,
  {
    bySelector: Record<string, StatefulSetOrphans[]>;
    others: StatefulSetOrphans[];
  }
> = {
  prod: {
    bySelector: {
      'backstage.io/kubernetes-id=orders': [
        sts('shop', 'orders-db', [10, 10], {
          cost: 2,
          firstSeen: '2026-11-03T00:00:00.000Z',
        }),
        sts('shop', 'orders-cache', []),
      ],
      'backstage.io/kubernetes-id=search-index': [
        sts('search', 'search-index', [50], { cost: 5 }),
      ],
    },
    others: [
      sts('legacy', 'old-db', [100], { cost: 10 }),
      sts('legacy', 'fine', []),
    ],
  },
  dev: {
    bySelector: {
      'backstage.io/kubernetes-id=orders': [
        sts('shop-dev', 'orders-db', [1], { cost: 0.1 }),
      ],
      'backstage.io/kubernetes-id=cart': [
        sts('shop-dev', 'cart-cache', [2], { cost: 0.2 }),
      ],
    },
    others: [],
  },
};

/** The StatefulSets of a cluster as the cluster has them: labelled as the selectors that find them say. */
function objectsOf(c: (typeof CLUSTERS)[string]): Map<string, V1StatefulSet> {
  const objects = new Map<string, V1StatefulSet>();
  const add = (report: StatefulSetOrphans, labels: Record<string, string>) =>
    objects.set(`${report.namespace}/${report.name}`, {
      metadata: {
        name: report.name,
        namespace: report.namespace,
        uid: report.uid,
        labels,
      },
    });
  for (const [selector, reports] of Object.entries(c.bySelector)) {
    const [key, value] = selector.split('=');
    for (const report of reports) add(report, { [key]: value });
  }
  for (const report of c.others) add(report, {});
  return objects;
}

function fakeFinder(failing: string[] = []) {
  const scanCluster = jest.fn(
    async (
      { name: cluster }: ClusterDetails,
      targets: EntityWorkloadTarget[],
      options: { includeUnowned?: boolean } = {},
    ): Promise<ClusterScan> => {
      if (failing.includes(cluster))
        throw new Error(`cluster "${cluster}" is unreachable`);
      const c = CLUSTERS[cluster];
      return {
        cluster,
        byEntity: new Map(
          targets.map(t => [t.entityRef, c.bySelector[t.labelSelector] ?? []]),
        ),
        unowned: options.includeUnowned ? c.others : [],
        objects: objectsOf(c),
      };
    },
  );
  const finder = {
    clustersOf: async () =>
      ['dev', 'prod'].map(name => ({ name } as ClusterDetails)),
    scanCluster,
  } as unknown as OrphanFinder;
  return { finder, scanCluster };
}

function fleetService(
  options: {
    readable?: (ref: string) => boolean;
    /** pvc-pruner.fleet.unowned.read, and pvc-pruner.unowned.prune unless `unownedPrune` is false. */
    unowned?: boolean;
    unownedPrune?: boolean;
    priced?: boolean;
    failing?: string[];
    entities?: Entity[];
    autoPrune?: () => Promise<FleetAutoPrune>;
  } = {},
) {
  const permissions = mockServices.permissions.mock();
  permissions.authorize.mockImplementation(
    async requests =>
      requests.map(r => ({
        result: (
          'resourceRef' in r && r.resourceRef
            ? (options.readable ?? (() => true))(r.resourceRef)
            : options.unowned &&
              (r.permission.name !== 'pvc-pruner.unowned.prune' ||
                options.unownedPrune !== false)
        )
          ? AuthorizeResult.ALLOW
          : AuthorizeResult.DENY,
      })) as any,
  );
  const { finder, scanCluster } = fakeFinder(options.failing);
  const sightings = {
    record: async () => new Map(),
    forgetInUse: async () => 0,
  } as unknown as OrphanSightingStore;
  const catalog = catalogServiceMock({
    entities: options.entities ?? ENTITIES,
  });
  const workloads = new WorkloadCatalog({
    catalog,
    auth: mockServices.auth(),
    logger: mockServices.logger.mock(),
  });
  const service = new FleetService({
    catalog,
    permissions,
    orphanFinder: finder,
    workloads,
    ownership: new OwnershipChecks({
      permissions,
      workloads,
      namespaceOwners: new NamespaceOwners(),
    }),
    annotator: new OrphanAnnotator(
      sightings,
      options.priced === false
        ? undefined
        : PriceList.of({ currency: 'EUR', defaultPricePerGiBMonth: 0.1 }),
    ),
    autoPrune: options.autoPrune,
  });
  return { service, permissions, scanCluster };
}

const query = (q: Partial<FleetQuery> = {}): FleetQuery => ({
  limit: 100,
  ...q,
});
const credentials = mockCredentials.user(ALICE);

describe('FleetService', () => {
  it('sums every readable entity with Kubernetes annotations, per StatefulSet with orphans, across clusters', async () => {
    const { service } = fleetService();
    const fleet = await service.list(query(), credentials);

    expect(fleet.entitiesScanned).toBe(3);
    expect(fleet.items.map(e => e.entityRef)).toEqual([
      'component:default/cart',
      'component:default/orders',
      'component:default/search-index',
    ]);
    const orders = fleet.items[1];
    expect(orders.owner).toBe('group:default/checkout');
    expect(orders.statefulSets).toEqual([
      {
        cluster: 'dev',
        namespace: 'shop-dev',
        name: 'orders-db',
        orphans: 1,
        reclaimableBytes: GIB,
        retainedBytes: 0,
        reclaimableMonthlyCost: 0.1,
        retainedMonthlyCost: 0,
      },
      {
        cluster: 'prod',
        namespace: 'shop',
        name: 'orders-db',
        orphans: 2,
        reclaimableBytes: 20 * GIB,
        retainedBytes: 0,
        reclaimableMonthlyCost: 2,
        retainedMonthlyCost: 0,
        firstSeenOrphanedAt: '2026-11-03T00:00:00.000Z',
      },
    ]);
    expect(orders.totals).toMatchObject({
      orphans: 3,
      reclaimableBytes: 21 * GIB,
    });
    expect(orders.totals.reclaimableMonthlyCost).toBeCloseTo(2.1);
    expect(fleet.totals).toMatchObject({
      entities: 3,
      statefulSets: 4,
      orphans: 5,
      reclaimableBytes: 73 * GIB,
    });
    expect(fleet.totals.reclaimableMonthlyCost).toBeCloseTo(7.3);
    expect(fleet.pricing).toEqual({
      currency: 'EUR',
      unpricedStorageClasses: [],
    });
    expect(fleet.clusters).toEqual([
      { cluster: 'dev', ok: true },
      { cluster: 'prod', ok: true },
    ]);
  });

  it('checks orphans.read for all entities in one call, and an entity the caller may not read is in no row and no total', async () => {
    const { service, permissions } = fleetService({
      readable: ref => ref !== 'component:default/search-index',
      unowned: true,
    });
    const fleet = await service.list(query(), credentials);

    expect(permissions.authorize).toHaveBeenCalledTimes(1);
    const [requests, options] = permissions.authorize.mock.calls[0];
    expect(options).toEqual({ credentials });
    expect(requests).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ resourceRef: 'component:default/orders' }),
        expect.objectContaining({
          resourceRef: 'component:default/search-index',
        }),
        {
          permission: expect.objectContaining({
            name: 'pvc-pruner.fleet.unowned.read',
          }),
        },
      ]),
    );
    const text = JSON.stringify(fleet);
    expect(text).not.toContain('search');
    expect(fleet.owners.map(o => o.owner)).toEqual(['group:default/checkout']);
    expect(fleet.totals.orphans).toBe(4);
    expect(fleet.totals.reclaimableBytes).toBe(23 * GIB);
    // Not unowned either: an entity (the caller cannot see) maps to it.
    expect(fleet.unowned!.statefulSets.map(s => s.name)).toEqual(['old-db']);
  });

  it('shows unowned StatefulSets with orphans only with pvc-pruner.fleet.unowned.read, worked out against the whole catalog', async () => {
    const without = await fleetService().service.list(query(), credentials);
    expect(without.unowned).toBeUndefined();
    expect(JSON.stringify(without)).not.toContain('old-db');

    const { service, scanCluster } = fleetService({ unowned: true });
    const fleet = await service.list(query(), credentials);
    expect(fleet.unowned).toEqual({
      statefulSets: [
        expect.objectContaining({
          cluster: 'prod',
          namespace: 'legacy',
          name: 'old-db',
          orphans: 1,
        }),
      ],
      totals: expect.objectContaining({
        orphans: 1,
        reclaimableBytes: 100 * GIB,
        reclaimableMonthlyCost: 10,
      }),
      prunable: true,
    });
    expect(scanCluster).toHaveBeenCalledWith(
      expect.objectContaining({ name: 'prod' }),
      expect.any(Array),
      { includeUnowned: true, requestAuth: {} },
    );
    // Unowned is not part of the entities' totals.
    expect(fleet.totals.orphans).toBe(5);
  });

  it('filters by cluster, namespace and owner, and totals only what matches', async () => {
    const { service, scanCluster } = fleetService({ unowned: true });

    const prod = await service.list(query({ cluster: 'prod' }), credentials);
    expect(scanCluster).toHaveBeenCalledTimes(1);
    expect(prod.clusters).toEqual([{ cluster: 'prod', ok: true }]);
    expect(prod.items.map(e => e.entityRef)).toEqual([
      'component:default/orders',
      'component:default/search-index',
    ]);

    const shop = await service.list(query({ namespace: 'shop' }), credentials);
    expect(
      shop.items.flatMap(e =>
        e.statefulSets.map(s => `${s.cluster}/${s.namespace}/${s.name}`),
      ),
    ).toEqual(['prod/shop/orders-db']);
    expect(shop.totals.orphans).toBe(2);
    expect(shop.unowned!.statefulSets).toEqual([]);

    const checkout = await service.list(
      query({ owner: 'checkout' }),
      credentials,
    );
    expect(checkout.items.map(e => e.entityRef)).toEqual([
      'component:default/cart',
      'component:default/orders',
    ]);
    expect(checkout.entitiesScanned).toBe(2);
    expect(checkout.unowned).toBeUndefined();
  });

  it('pages by entity ref; totals and unowned describe every page, unowned comes with the first', async () => {
    const { service } = fleetService({ unowned: true });
    const first = await service.list(query({ limit: 2 }), credentials);
    expect(first.items.map(e => e.entityRef)).toEqual([
      'component:default/cart',
      'component:default/orders',
    ]);
    expect(first.nextCursor).toEqual(expect.any(String));
    expect(first.unowned).toBeDefined();
    const second = await service.list(
      query({ limit: 2, cursor: first.nextCursor }),
      credentials,
    );
    expect(second.items.map(e => e.entityRef)).toEqual([
      'component:default/search-index',
    ]);
    expect(second.nextCursor).toBeUndefined();
    expect(second.unowned).toBeUndefined();
    expect(second.totals).toEqual(first.totals);
  });

  it.each<[Partial<FleetQuery>, RegExp]>([
    [
      { cluster: 'staging' },
      /Unknown cluster "staging": the configured clusters are "dev", "prod"/,
    ],
    [{ owner: 'group:' }, /Invalid owner "group:"/],
    [{ cursor: 'not-a-cursor' }, /Invalid cursor/],
  ])(
    'refuses %j with an InputError that says what is wrong',
    async (q, message) => {
      const { service, scanCluster } = fleetService();
      const answer = service.list(query(q), credentials);
      await expect(answer).rejects.toThrow(InputError);
      await expect(answer).rejects.toThrow(message);
      expect(scanCluster).not.toHaveBeenCalled();
    },
  );

  it('reports a cluster that fails without hiding the others', async () => {
    const { service } = fleetService({ failing: ['dev'] });
    const fleet = await service.list(query(), credentials);
    expect(fleet.clusters).toEqual([
      {
        cluster: 'dev',
        ok: false,
        error: expect.objectContaining({
          message: expect.stringContaining('unreachable'),
        }),
      },
      { cluster: 'prod', ok: true },
    ]);
    expect(fleet.items.map(e => e.entityRef)).toEqual([
      'component:default/orders',
      'component:default/search-index',
    ]);
  });

  it('answers automatic pruning: on, the last run and the next', async () => {
    const autoPrune: FleetAutoPrune = {
      enabled: true,
      nextRunAt: '2026-12-03T11:00:00.000Z',
      lastRun: {
        id: '5d0c1d8e-58f4-4c4a-9d8c-3bb2f0a8a001',
        startedAt: '2026-12-03T10:00:00.000Z',
        finishedAt: '2026-12-03T10:01:00.000Z',
        status: 'finished',
        considered: 3,
        eligible: 2,
        deleted: 2,
        kept: 1,
        bytesDeleted: 2 * 2 ** 30,
      },
    };
    const { service } = fleetService({ autoPrune: async () => autoPrune });
    expect((await service.list(query(), credentials)).autoPrune).toEqual(
      autoPrune,
    );
    const { service: without } = fleetService();
    expect(
      (await without.list(query(), credentials)).autoPrune,
    ).toBeUndefined();
  });

  it('without pricing, totals carry bytes only', async () => {
    const { service } = fleetService({ priced: false });
    const fleet = await service.list(query(), credentials);
    expect(fleet.pricing).toBeUndefined();
    expect(fleet.totals.reclaimableMonthlyCost).toBeUndefined();
  });

  it('offers the unowned prune only to holders of pvc-pruner.unowned.prune', async () => {
    const { service } = fleetService({ unowned: true, unownedPrune: false });
    const fleet = await service.list(query(), credentials);
    expect(fleet.unowned?.prunable).toBe(false);
  });

  describe('a StatefulSet several entities claim', () => {
    const twin = component('orders-v2', 'checkout', {
      'backstage.io/kubernetes-id': 'orders',
    });

    it('is listed under each claimant, saying who else claims it, and counted once in every total', async () => {
      const { service } = fleetService({ entities: [...ENTITIES, twin] });
      const single = await fleetService().service.list(query(), credentials);
      const fleet = await service.list(query(), credentials);

      const rows = (ref: string) =>
        fleet.items.find(e => e.entityRef === ref)!.statefulSets;
      expect(rows('component:default/orders-v2')).toEqual(
        rows('component:default/orders').map(r => ({
          ...r,
          sharedWith: ['component:default/orders'],
        })),
      );
      expect(rows('component:default/orders')[0].sharedWith).toEqual([
        'component:default/orders-v2',
      ]);
      expect(fleet.totals).toEqual({ ...single.totals, entities: 4 });
      const checkout = (f: typeof fleet) =>
        f.owners.find(o => o.owner === 'group:default/checkout')!;
      expect(checkout(fleet).totals).toEqual(checkout(single).totals);
      expect(checkout(fleet).entities).toBe(3);
    });

    it('is not listed, nor counted, unless the caller may read every claimant', async () => {
      const { service } = fleetService({
        entities: [...ENTITIES, twin],
        readable: ref => ref !== 'component:default/orders-v2',
      });
      const fleet = await service.list(query(), credentials);

      const orders = fleet.items.find(
        e => e.entityRef === 'component:default/orders',
      );
      expect(orders).toBeUndefined();
      expect(JSON.stringify(fleet)).not.toContain('orders-db');
      expect(fleet.totals.orphans).toBe(2);
    });
  });
});
