import { DatabaseService } from '@backstage/backend-plugin-api';
import { mockServices } from '@backstage/backend-test-utils';
import { Entity } from '@backstage/catalog-model';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import type {
  V1PersistentVolumeClaim,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { KubeSim, pvc, statefulSet } from 'kube-sim';
import knexFactory, { Knex } from 'knex';
import { componentEntity } from '../__testUtils__/catalogEntities';
import { gatewaysTo, startShopSimulator } from '../__testUtils__/shopSimulator';
import { ClusterCaches, KubeGateways } from '../kubernetes';
import {
  NamespaceSnapshot,
  OrphanFinder,
  WATCH_CACHE_TRIMMERS,
} from '../orphans';
import { ClaimantIndex, WorkloadCatalog, workloadEntityOf } from '../ownership';
import { ClaimLineageStore } from './ClaimLineageStore';
import { LineageRecorder } from './LineageRecorder';

jest.setTimeout(20000);

let knex: Knex;
let store: ClaimLineageStore;

beforeEach(async () => {
  knex = knexFactory({
    client: 'better-sqlite3',
    connection: ':memory:',
    useNullAsDefault: true,
  });
  store = await ClaimLineageStore.create({
    database: {
      getClient: async () => knex,
      migrations: { skip: false },
    } as DatabaseService,
  });
});

afterEach(async () => {
  await knex.destroy();
});

/** orders-db claimed by orders (its kubernetes-id) and by a namespace-wide selector. */
const ENTITIES: Entity[] = [
  componentEntity('orders-db'),
  componentEntity('shop-wide', {
    annotations: {
      'backstage.io/kubernetes-label-selector': 'team=shop',
      'backstage.io/kubernetes-namespace': 'shop',
    },
  }),
  componentEntity('web'),
];

const indexOf = (entities: Entity[]) =>
  new ClaimantIndex(entities.flatMap(e => workloadEntityOf(e) ?? []));

function sts(
  name: string,
  templates: string[],
  uid = `uid-${name}`,
): V1StatefulSet {
  return {
    metadata: {
      name,
      namespace: 'shop',
      uid,
      labels: { 'backstage.io/kubernetes-id': name, team: 'shop' },
    },
    spec: {
      replicas: 1,
      selector: {},
      serviceName: name,
      template: {},
      volumeClaimTemplates: templates.map(t => ({ metadata: { name: t } })),
    },
  };
}

const claim = (name: string, namespace = 'shop'): V1PersistentVolumeClaim => ({
  metadata: { name, namespace, uid: `uid-${name}` },
});

describe('LineageRecorder', () => {
  it("records, for each claim a StatefulSet's templates and ordinals name, the StatefulSet, template, ordinal and its claimants", async () => {
    const recorder = new LineageRecorder({
      store,
      workloads: { warm: async () => indexOf(ENTITIES) },
      logger: mockServices.logger.mock(),
    });
    const ordersDb = sts('orders-db', ['data', 'logs']);
    const snapshot = NamespaceSnapshot.of(
      'shop',
      [
        claim('data-orders-db-0'),
        claim('data-orders-db-3'),
        claim('logs-orders-db-0'),
        // Not an ordinal, another StatefulSet's, another namespace's.
        claim('data-orders-db-backup'),
        claim('data-web-0'),
        claim('data-orders-db-1', 'other'),
      ],
      [],
      [ordersDb],
    );

    await recorder.saw('demo', [{ statefulSet: ordersDb, snapshot }]);

    const kept = await store.lineageByStatefulSetName(
      'demo',
      'shop',
      'orders-db',
    );
    expect(
      kept.map(l => [l.claimUid, l.template, l.ordinal, l.statefulSet.uid]),
    ).toEqual([
      ['uid-data-orders-db-0', 'data', 0, 'uid-orders-db'],
      ['uid-data-orders-db-3', 'data', 3, 'uid-orders-db'],
      ['uid-logs-orders-db-0', 'logs', 0, 'uid-orders-db'],
    ]);
    expect(kept[0].claimants).toEqual([
      'component:default/orders-db',
      'component:default/shop-wide',
    ]);
    // Their catalog uids, which tell them from entities registered later under the same names.
    expect(kept[0].claimantUids).toEqual({
      'component:default/orders-db': 'uid-orders-db',
      'component:default/shop-wide': 'uid-shop-wide',
    });
  });

  it('leaves out a claim whose name fits another StatefulSet of the namespace too', async () => {
    const recorder = new LineageRecorder({
      store,
      workloads: { warm: async () => indexOf(ENTITIES) },
      logger: mockServices.logger.mock(),
    });
    // data-ledger-db-2 is ordinal 2 of ledger-db (template data) and of db (template data-ledger).
    const ledgerDb = sts('ledger-db', ['data', 'logs']);
    const db = sts('db', ['data-ledger']);
    const snapshot = NamespaceSnapshot.of(
      'shop',
      [claim('data-ledger-db-2'), claim('logs-ledger-db-0')],
      [],
      [ledgerDb, db],
    );

    await recorder.saw('demo', [
      { statefulSet: ledgerDb, snapshot },
      { statefulSet: db, snapshot },
    ]);

    expect((await store.lineageOf('demo', ['uid-data-ledger-db-2'])).size).toBe(
      0,
    );
    expect(
      (await store.lineageOf('demo', ['uid-logs-ledger-db-0'])).get(
        'uid-logs-ledger-db-0',
      )?.statefulSet.name,
    ).toBe('ledger-db');
  });

  it('never fails a scan: a catalog it cannot read is logged once, and nothing is recorded', async () => {
    const logger = mockServices.logger.mock();
    const recorder = new LineageRecorder({
      store,
      workloads: {
        warm: async () => {
          throw new Error('catalog down');
        },
      },
      logger,
    });
    const ordersDb = sts('orders-db', ['data']);
    const snapshot = NamespaceSnapshot.of(
      'shop',
      [claim('data-orders-db-0')],
      [],
      [ordersDb],
    );

    await recorder.saw('demo', [{ statefulSet: ordersDb, snapshot }]);
    await recorder.saw('demo', [{ statefulSet: ordersDb, snapshot }]);

    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(await knex('pvc_pruner_claim_lineage')).toEqual([]);
  });

  describe('fed by the orphan finder', () => {
    let sim: KubeSim;
    let gateways: KubeGateways;

    beforeAll(async () => {
      ({ sim } = await startShopSimulator());
      sim.store.create(
        'apps/statefulsets',
        statefulSet('orders-db', { replicas: 1 }, 'shop', {
          'backstage.io/kubernetes-id': 'orders-db',
          team: 'shop',
        }),
      );
      for (const i of [0, 1, 2])
        sim.store.create(
          'persistentvolumeclaims',
          pvc(`data-orders-db-${i}`, {}, 'shop'),
        );
      gateways = gatewaysTo(sim);
    });

    afterAll(async () => {
      await sim.close();
    });

    const uidOf = (name: string) =>
      sim.store.get('persistentvolumeclaims', 'shop', name)!.metadata!.uid!;

    /** A finder recording lineage into a store of its own (remembering nothing yet) over the test's database. */
    const finderWith = async (caches?: ClusterCaches) =>
      new OrphanFinder(
        gateways,
        caches,
        undefined,
        undefined,
        undefined,
        new LineageRecorder({
          store: await ClaimLineageStore.create({
            database: {
              getClient: async () => knex,
              migrations: { skip: false },
            } as DatabaseService,
          }),
          workloads: new WorkloadCatalog({
            catalog: catalogServiceMock({ entities: ENTITIES }),
            auth: mockServices.auth(),
            logger: mockServices.logger.mock(),
          }),
          logger: mockServices.logger.mock(),
        }),
      );

    const target = {
      entity: componentEntity('orders-db'),
      entityRef: 'component:default/orders-db',
      labelSelector: 'backstage.io/kubernetes-id=orders-db',
    };

    it("a live scan of a StatefulSet records its claims' lineage, with its claimants from the catalog", async () => {
      await (await finderWith()).findForEntity(target);

      const kept = await store.lineageOf(
        'demo',
        [0, 1, 2].map(i => uidOf(`data-orders-db-${i}`)),
      );
      const ordersDb = {
        name: 'orders-db',
        uid: sim.store.get('apps/statefulsets', 'shop', 'orders-db')!.metadata!
          .uid,
      };
      const claimants = [
        'component:default/orders-db',
        'component:default/shop-wide',
      ];
      expect(
        [...kept.values()]
          .map(l => [l.claimName, l.ordinal, l.statefulSet, l.claimants])
          .sort(),
      ).toEqual([
        ['data-orders-db-0', 0, ordersDb, claimants],
        ['data-orders-db-1', 1, ordersDb, claimants],
        ['data-orders-db-2', 2, ordersDb, claimants],
      ]);
    });

    it('a scan read from the watch cache records it too', async () => {
      const caches = new ClusterCaches({
        trim: WATCH_CACHE_TRIMMERS,
        logger: mockServices.logger.mock(),
        syncWaitMs: 5000,
        timing: { minBackoffMs: 20, maxBackoffMs: 100, minWatchMs: 0 },
      });
      try {
        const [demo] = await gateways.list();
        const gateway = await gateways.for('demo');
        caches.ready(demo, gateway); // starts it
        expect(await caches.whenReady(demo, gateway)).toBeDefined();
        const listClaims = jest.spyOn(gateway, 'listClaims');

        const recorded = () =>
          store
            .lineageByStatefulSetName('demo', 'shop', 'orders-db')
            .then(kept => kept.map(l => l.claimName));
        const all = [
          'data-orders-db-0',
          'data-orders-db-1',
          'data-orders-db-2',
        ];

        await (await finderWith(caches)).findForEntity(target);
        expect(await recorded()).toEqual(all);
        await knex('pvc_pruner_claim_lineage').delete();
        await (await finderWith(caches)).scanCluster(demo, [target]);
        expect(await recorded()).toEqual(all);

        // Both scans read the cache, not the cluster.
        expect(listClaims).not.toHaveBeenCalled();
        listClaims.mockRestore();
      } finally {
        await caches.stop();
      }
    });
  });
});
