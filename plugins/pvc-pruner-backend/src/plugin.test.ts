import {
  coreServices,
  createBackendModule,
  createBackendPlugin,
} from '@backstage/backend-plugin-api';
import {
  mockCredentials,
  mockServices,
  startTestBackend,
} from '@backstage/backend-test-utils';
import { Entity, stringifyEntityRef } from '@backstage/catalog-model';
import { JsonObject } from '@backstage/types';
import {
  catalogConditions,
  createCatalogConditionalDecision,
  permissionRules,
} from '@backstage/plugin-catalog-backend/alpha';
import { catalogEntityPermissionResourceRef } from '@backstage/plugin-catalog-node/alpha';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import permissionBackendPlugin from '@backstage/plugin-permission-backend';
import {
  AuthorizeResult,
  isPermission,
  PolicyDecision,
} from '@backstage/plugin-permission-common';
import {
  createPermissionIntegrationRouter,
  PermissionPolicy,
  PolicyQuery,
  PolicyQueryUser,
} from '@backstage/plugin-permission-node';
import { policyExtensionPoint } from '@backstage/plugin-permission-node/alpha';
import {
  pvcPrunerOrphansReadPermission,
  pvcPrunerPrunePermission,
  pvcPrunerUnownedPrunePermission,
} from 'backstage-plugin-pvc-pruner-common';
import { KubeSim, startKubeSim } from 'kube-sim';
import knexFactory from 'knex';
import request from 'supertest';
import { pvcPrunerPlugin } from './plugin';
import { PERMISSION_FRAMEWORK_OFF_REFUSAL } from './permissions';
import { PruneJobStore } from './database';
import { IN_USE_CLAIMS_TASK_ID } from './orphans';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { componentEntity } from './__testUtils__/catalogEntities';

/*
 * The plugin as Backstage runs it (startTestBackend: real httpRouter with its
 * auth policy, real error handler, real database), configured with the
 * simulator as its one cluster exactly as `kubernetes.clusterLocatorMethods`
 * is written by users. The simulator's request log proves what reached the
 * cluster.
 */

jest.setTimeout(30000);

const ORDERS = 'component:default/orders';
const ALICE = 'user:default/alice';
const BOB = 'user:default/bob';
/** A second cluster that cannot be reached; its token must not leak either. */
const UNREACHABLE_TOKEN = 'unreachable-cluster-secret-token-4f1d2';

function component(
  name: string,
  annotations: Record<string, string>,
  ownedBy = 'user:default/alice',
): Entity {
  return {
    ...componentEntity(name, { owner: ownedBy, annotations }),
    relations: [{ type: 'ownedBy', targetRef: ownedBy }],
  };
}

const ENTITIES: Entity[] = [
  component('orders', { 'backstage.io/kubernetes-id': 'orders' }),
  component('cart', { 'backstage.io/kubernetes-id': 'cart' }),
  component('bare', {}),
  component('search', {
    'backstage.io/kubernetes-id': 'search-index',
    'backstage.io/kubernetes-namespace': 'search',
  }),
  component('elsewhere', {
    'backstage.io/kubernetes-id': 'orders',
    'backstage.io/kubernetes-cluster': 'prod',
  }),
];

let sim: KubeSim;

function config(
  sim0: KubeSim,
  extra: JsonObject = {},
  clusters: JsonObject[] = [],
): JsonObject {
  return {
    kubernetes: {
      clusterLocatorMethods: [
        {
          type: 'config',
          clusters: [
            {
              name: 'demo',
              url: sim0.url,
              authProvider: 'serviceAccount',
              serviceAccountToken: sim0.token,
              caData: Buffer.from(sim0.caCert!).toString('base64'),
            },
            ...clusters,
          ],
        },
      ],
    },
    // The permissions service is the test's (allowing all unless told otherwise).
    permission: { enabled: true },
    pvcPruner: { leaseDurationSeconds: 5, volumeWaitTimeoutSeconds: 5 },
    ...extra,
  };
}

/** Backstage's own permissions service: it asks the permission backend, or allows all while `permission.enabled` is not true. */
const frameworkPermissions = () => mockServices.permissions.factory();

async function startPlugin(
  options: {
    config?: JsonObject;
    features?: any[];
    /** The permissions service; by default, a policy that allows everything. */
    permissions?: any;
    entities?: Entity[];
  } = {},
) {
  const backend = await startTestBackend({
    features: [
      pvcPrunerPlugin,
      mockServices.rootConfig.factory({ data: options.config ?? config(sim) }),
      catalogServiceMock.factory({ entities: options.entities ?? ENTITIES }),
      options.permissions ??
        mockServices.permissions.factory({ result: AuthorizeResult.ALLOW }),
      ...(options.features ?? []),
    ],
  });
  return backend.server;
}

/** The demo StatefulSet's orphans, as a scan reports them (uids from the simulator). */
function ordersOrphans() {
  return ['data-orders-db-2', 'data-orders-db-3'].map(name => ({
    name,
    uid: sim.store.get('persistentvolumeclaims', 'shop', name)!.metadata.uid,
  }));
}

/**
 * A prune request; a dry run unless told otherwise. A dry run writes too (a
 * dry-run Lease create, dry-run DELETEs), so "nothing reached the cluster"
 * holds for it as for a prune, and a refusal that fails cannot delete the
 * claims the other tests share.
 */
function prune(overrides: Record<string, unknown> = {}) {
  return {
    entityRef: ORDERS,
    cluster: 'demo',
    namespace: 'shop',
    statefulSet: 'orders-db',
    pvcs: ordersOrphans(),
    dryRun: true,
    ...overrides,
  };
}

const writes = () => sim.requests().filter(r => r.method !== 'GET');

async function waitFor<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 10000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise(r => setTimeout(r, 50));
  }
}

type Server = Parameters<typeof request>[0];

const getOrphans = (server: Server, entityRef = ORDERS) =>
  request(server).get('/api/pvc-pruner/v1/orphans').query({ entityRef });

const postPrune = (server: Server, body: unknown = prune()) =>
  request(server)
    .post('/api/pvc-pruner/v1/prune-jobs')
    .send(body as object);

/** The request, sent with the credentials of `user`. */
const asUser = (user: string, req: request.Test) =>
  req.set('authorization', mockCredentials.user.header(user));

/** Waits until the job has finished, so that its work does not run into the next test. */
function untilFinished(server: Server, jobId: string) {
  return waitFor(
    async () =>
      (await request(server).get(`/api/pvc-pruner/v1/prune-jobs/${jobId}`)).body
        .finishedAt,
  );
}

/**
 * The catalog's side of conditional decisions: the catalog-entity resource type with the catalog's
 * real rules, served at /api/catalog/.well-known/backstage/permissions/apply-conditions. (It is mounted
 * directly because the permissionsRegistry's endpoint wants an on-behalf-of token with an actor,
 * which the mock auth service does not issue.)
 */
function catalogPermissionIntegration(entities: Entity[] = ENTITIES) {
  return createBackendPlugin({
    pluginId: 'catalog',
    register(env) {
      env.registerInit({
        deps: { httpRouter: coreServices.httpRouter },
        async init({ httpRouter }) {
          httpRouter.use(
            createPermissionIntegrationRouter({
              resourceType: catalogEntityPermissionResourceRef.resourceType,
              rules: Object.values(permissionRules),
              getResources: async refs =>
                refs.map(ref =>
                  entities.find(e => stringifyEntityRef(e) === ref),
                ),
            }),
          );
        },
      });
    },
  });
}

/** A permission policy module for the permission backend. */
function policyModuleOf(policy: PermissionPolicy) {
  return createBackendModule({
    pluginId: 'permission',
    moduleId: 'test-policy',
    register(reg) {
      reg.registerInit({
        deps: { policy: policyExtensionPoint },
        async init({ policy: extension }) {
          extension.setPolicy(policy);
        },
      });
    },
  });
}

/** A decision that gives the permission to the entity's owners only. */
function ownersOnly(
  permission: Parameters<typeof createCatalogConditionalDecision>[0],
  user?: PolicyQueryUser,
) {
  return createCatalogConditionalDecision(
    permission,
    catalogConditions.isEntityOwner({
      claims: user?.info.ownershipEntityRefs ?? [],
    }),
  );
}

/** The plugin behind the real permission backend, deciding with `policy` and the catalog's rules. */
function startPluginWithPolicy(
  policy: PermissionPolicy,
  entities: Entity[] = ENTITIES,
) {
  return startPlugin({
    config: config(sim, { permission: { enabled: true } }),
    entities,
    permissions: frameworkPermissions(),
    features: [
      permissionBackendPlugin,
      policyModuleOf(policy),
      catalogPermissionIntegration(entities),
    ],
  });
}

beforeAll(async () => {
  sim = await startKubeSim({ scenario: 'demo', timeFactor: 0.02, https: true });
  // Until the demo's claims are provisioned and bound.
  const deadline = Date.now() + 10000;
  while (
    sim.store
      .list('persistentvolumeclaims')
      .items.some(c => c.status?.phase !== 'Bound') &&
    Date.now() < deadline
  ) {
    await new Promise(r => setTimeout(r, 25));
  }
});

afterAll(async () => {
  await sim?.close();
});

beforeEach(() => {
  sim.clearRequests();
  sim.clearFaults();
});

describe('pvcPrunerPlugin', () => {
  it('serves /api/pvc-pruner/health, even without credentials', async () => {
    const server = await startPlugin();

    await request(server)
      .get('/api/pvc-pruner/health')
      .expect(200, { status: 'ok' });
    const anonymous = await request(server)
      .get('/api/pvc-pruner/health')
      .set('authorization', mockCredentials.none.header());
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toEqual({ status: 'ok' });
    expect(
      (await request(server).get('/api/pvc-pruner/v1/unknown')).status,
    ).toBe(404);
  });

  it('forgets the sightings of claims pods use from the watch caches every few seconds, only while automatic pruning is enabled', async () => {
    const scheduledWith = async (autoPrune: JsonObject) => {
      const scheduler = mockServices.scheduler.mock();
      await startPlugin({
        config: config(sim, {
          pvcPruner: {
            leaseDurationSeconds: 5,
            volumeWaitTimeoutSeconds: 5,
            autoPrune,
          },
        }),
        features: [scheduler.factory],
      });
      return scheduler.scheduleTask.mock.calls
        .map(([task]) => task)
        .filter(task => task.id === IN_USE_CLAIMS_TASK_ID);
    };

    expect(await scheduledWith({ enabled: true })).toEqual([
      expect.objectContaining({ scope: 'local', frequency: { seconds: 10 } }),
    ]);
    expect(await scheduledWith({ enabled: false })).toEqual([]);
  });

  it('registers its permissions with the permission framework: two on catalog entities, one basic', async () => {
    const server = await startPlugin();

    const response = await request(server)
      .get('/api/pvc-pruner/.well-known/backstage/permissions/metadata')
      .set('authorization', mockCredentials.service.header());

    expect(response.status).toBe(200);
    expect(response.body.permissions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'pvc-pruner.orphans.read',
          resourceType: 'catalog-entity',
          attributes: { action: 'read' },
        }),
        expect.objectContaining({
          name: 'pvc-pruner.prune',
          resourceType: 'catalog-entity',
          attributes: { action: 'delete' },
        }),
        {
          type: 'basic',
          name: 'pvc-pruner.fleet.unowned.read',
          attributes: { action: 'read' },
        },
      ]),
    );
  });

  it('refuses a prune that asks for snapshots while pvcPruner.snapshots.enabled is not true, with 400 saying so, and asks the cluster nothing', async () => {
    const server = await startPlugin();

    const response = await asUser(
      ALICE,
      postPrune(server, prune({ snapshot: true })),
    );

    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      name: 'InputError',
      message: expect.stringContaining('pvcPruner.snapshots.enabled'),
    });
    expect(writes()).toEqual([]);
  });

  it('takes a prune that asks for snapshots once they are enabled', async () => {
    const server = await startPlugin({
      config: config(sim, {
        pvcPruner: {
          leaseDurationSeconds: 5,
          volumeWaitTimeoutSeconds: 5,
          snapshots: { enabled: true },
        },
      }),
    });

    const response = await asUser(
      ALICE,
      postPrune(server, prune({ snapshot: true })),
    );

    expect(response.status).toBe(202);
    await untilFinished(server, response.body.id);
  });

  it("tells the card whether snapshots are on, and with them each orphan's plan: each orphan the class the simulator's default names, or none needed for a Retain volume", async () => {
    const off = await startPlugin();
    const offScan = await getOrphans(off, ORDERS).set(
      'authorization',
      mockCredentials.user.header(ALICE),
    );
    expect(offScan.body.snapshots).toEqual({ enabled: false });
    expect(
      offScan.body.clusters[0].statefulSets[0].orphans[0],
    ).not.toHaveProperty('snapshotPlan');

    const on = await startPlugin({
      config: config(sim, {
        pvcPruner: { snapshots: { enabled: true, retentionDays: 3 } },
      }),
    });
    const onScan = await getOrphans(on, ORDERS).set(
      'authorization',
      mockCredentials.user.header(ALICE),
    );
    expect(onScan.status).toBe(200);
    expect(onScan.body.snapshots).toEqual({
      enabled: true,
      retentionDays: 3,
      required: true,
    });
    const orphans = onScan.body.clusters[0].statefulSets[0].orphans;
    expect(orphans.length).toBeGreaterThan(0);
    // The simulator serves snapshots, with one default class for its driver.
    const retained = orphans.filter((o: any) => o.volume?.retained);
    const deleted = orphans.filter((o: any) => !o.volume?.retained);
    expect(deleted.length).toBeGreaterThan(0);
    expect(deleted.map((o: any) => o.snapshotPlan)).toEqual(
      deleted.map(() => ({
        kind: 'class',
        volumeSnapshotClass: expect.any(String),
      })),
    );
    expect(retained.map((o: any) => o.snapshotPlan)).toEqual(
      retained.map(() => ({
        kind: 'not-needed',
        reason: expect.stringContaining('Retain'),
      })),
    );

    // The fleet's Unowned panel is told the same, so it offers the same choice.
    const unowned = await request(on)
      .get('/api/pvc-pruner/v1/unowned/orphans')
      .query({
        cluster: 'demo',
        namespace: 'search',
        statefulSet: 'nightly-reports',
      })
      .set('authorization', mockCredentials.user.header(ALICE));
    expect(unowned.status).toBe(200);
    expect(unowned.body.snapshots).toEqual(onScan.body.snapshots);
    expect(unowned.body.statefulSet.orphans.length).toBeGreaterThan(0);
    expect(
      unowned.body.statefulSet.orphans.map((o: any) => o.snapshotPlan?.kind),
    ).toEqual(unowned.body.statefulSet.orphans.map(() => 'class'));
  });

  describe('cost and first sightings', () => {
    const GIB = 2 ** 30;
    const scan = (server: Server, entityRef = ORDERS) =>
      getOrphans(server, entityRef).set(
        'authorization',
        mockCredentials.user.header(ALICE),
      );

    it('prices each orphan and the totals from pvcPruner.pricing, and names StorageClasses it has no price for', async () => {
      const server = await startPlugin({
        config: config(sim, {
          pvcPruner: {
            pricing: { currency: 'EUR', storageClasses: { standard: 0.1 } },
          },
        }),
      });

      const orders = (await scan(server)).body;
      const [sts] = orders.clusters[0].statefulSets;
      expect(sts.orphans.length).toBeGreaterThan(0);
      for (const o of sts.orphans)
        expect(o.monthlyCost).toBeCloseTo(
          ((o.capacityBytes ?? o.requestedBytes) / GIB) * 0.1,
        );
      expect(orders.totals.reclaimableMonthlyCost).toBeCloseTo(
        (orders.totals.reclaimableBytes / GIB) * 0.1,
      );
      expect(orders.totals.retainedMonthlyCost).toBe(0);
      expect(orders.pricing).toEqual({
        currency: 'EUR',
        unpricedStorageClasses: [],
      });

      const search = (await scan(server, 'component:default/search')).body;
      expect(search.totals.retainedBytes).toBeGreaterThan(0);
      expect(search.totals.retainedMonthlyCost).toBe(0);
      expect(search.pricing.unpricedStorageClasses).toEqual(['premium-retain']);
    });

    it('says what Retain volumes keep costing after the prune', async () => {
      const server = await startPlugin({
        config: config(sim, {
          pvcPruner: {
            pricing: { currency: 'USD', defaultPricePerGiBMonth: 0.2 },
          },
        }),
      });
      const search = (await scan(server, 'component:default/search')).body;
      expect(search.totals.retainedMonthlyCost).toBeCloseTo(
        (search.totals.retainedBytes / GIB) * 0.2,
      );
      expect(search.pricing).toEqual({
        currency: 'USD',
        unpricedStorageClasses: [],
      });
    });

    it('without pricing, answers bytes only: no cost anywhere', async () => {
      const server = await startPlugin();
      const response = await scan(server);
      expect(response.status).toBe(200);
      expect(response.text).not.toMatch(/MonthlyCost|monthlyCost|pricing/);
    });

    it('records when it first saw each orphan, and keeps that date on later scans', async () => {
      const server = await startPlugin();
      const before = Date.now();
      const first = (await scan(server)).body.clusters[0].statefulSets[0];
      const seen = first.orphans.map((o: any) => o.firstSeenOrphanedAt);
      for (const at of seen) {
        expect(Date.parse(at)).toBeGreaterThanOrEqual(before - 1000);
        expect(Date.parse(at)).toBeLessThanOrEqual(Date.now());
      }
      expect(first.firstSeenOrphanedAt).toBe([...seen].sort()[0]);

      await new Promise(r => setTimeout(r, 20));
      const again = (await scan(server)).body.clusters[0].statefulSets[0];
      expect(again.orphans.map((o: any) => o.firstSeenOrphanedAt)).toEqual(
        seen,
      );
    });
  });

  describe('credentials', () => {
    it('lets users and services read an entity’s claims, and only users prune or read the fleet (service: 403, none: 401)', async () => {
      const server = await startPlugin();
      const scan = (auth: string) =>
        getOrphans(server).set('authorization', auth);
      const post = (auth: string) =>
        postPrune(server).set('authorization', auth);

      expect((await scan(mockCredentials.user.header(ALICE))).status).toBe(200);
      expect((await scan(mockCredentials.service.header())).status).toBe(200);
      expect((await scan(mockCredentials.none.header())).status).toBe(401);

      // The first scan started the watch cache: once it watches, it asks nothing more.
      await waitFor(
        async () =>
          sim.requests().filter(r => r.verb === 'watch' && r.status === 200)
            .length >= 4,
      );
      sim.clearRequests();
      const service = await post(mockCredentials.service.header());
      expect(service.status).toBe(403);
      expect(service.body.error.message).toMatch(
        /does not allow 'service' credentials/,
      );
      const none = await post(mockCredentials.none.header());
      expect(none.status).toBe(401);
      // The fleet is for users only.
      const fleet = (auth: string) =>
        request(server)
          .get('/api/pvc-pruner/v1/fleet')
          .set('authorization', auth);
      const serviceFleet = await fleet(mockCredentials.service.header());
      expect(serviceFleet.status).toBe(403);
      expect(serviceFleet.body.error.message).toMatch(
        /does not allow 'service' credentials/,
      );
      expect((await fleet(mockCredentials.none.header())).status).toBe(401);
      expect(sim.requests()).toEqual([]);

      const user = await post(mockCredentials.user.header(ALICE));
      expect(user.status).toBe(202);
      const job = await request(server)
        .get(`/api/pvc-pruner/v1/prune-jobs/${user.body.id}`)
        .set('authorization', mockCredentials.service.header());
      expect(job.status).toBe(200);
      expect(job.body.requestedBy).toBe(ALICE);
      await untilFinished(server, user.body.id);
    });
  });

  describe('permissions', () => {
    function permissionsAllowing(allowed: (name: string) => AuthorizeResult) {
      const permissions = mockServices.permissions.mock();
      permissions.authorize.mockImplementation(
        async requests =>
          requests.map(r => ({ result: allowed(r.permission.name) })) as any,
      );
      return permissions;
    }

    it('asks about the entity (resourceRef), so policies can apply catalog conditions: alone before any cluster is asked, then with every claimant in one batch, at the POST and again as the job starts', async () => {
      const permissions = permissionsAllowing(() => AuthorizeResult.ALLOW);
      const server = await startPlugin({ permissions: permissions.factory });

      await asUser(BOB, getOrphans(server, 'Component:orders')).expect(200);
      const posted = await asUser(BOB, postPrune(server));
      expect(posted.status).toBe(202);
      await untilFinished(server, posted.body.id);

      const asked = permissions.authorize.mock.calls
        .map(([requests, options]) => ({
          requests,
          user: (options.credentials.principal as any).userEntityRef,
        }))
        .filter(({ user }) => user === BOB);
      const claimants = {
        requests: [
          { permission: pvcPrunerPrunePermission, resourceRef: ORDERS },
          { permission: pvcPrunerUnownedPrunePermission },
        ],
        user: BOB,
      };
      expect(asked).toEqual([
        {
          requests: [
            { permission: pvcPrunerOrphansReadPermission, resourceRef: ORDERS },
          ],
          user: BOB,
        },
        {
          requests: [
            { permission: pvcPrunerPrunePermission, resourceRef: ORDERS },
          ],
          user: BOB,
        },
        claimants,
        claimants,
      ]);
    });

    it.each([
      ['DENY', AuthorizeResult.DENY],
      ['an unresolved CONDITIONAL', AuthorizeResult.CONDITIONAL],
    ])(
      'refuses with 403 when the prune decision is %s, and writes nothing',
      async (_what, result) => {
        const permissions = permissionsAllowing(name =>
          name === 'pvc-pruner.prune' ? result : AuthorizeResult.ALLOW,
        );
        const server = await startPlugin({ permissions: permissions.factory });

        const response = await postPrune(server);

        expect(response.status).toBe(403);
        expect(response.body.error.message).toBe(
          `You are not allowed to prune the claims of ${ORDERS} (pvc-pruner.prune)`,
        );
        expect(writes()).toEqual([]);
        // The claims are untouched, and reading is still allowed.
        expect(
          sim.store.get('persistentvolumeclaims', 'shop', 'data-orders-db-2'),
        ).toBeDefined();
        expect((await getOrphans(server)).status).toBe(200);
      },
    );

    it('refuses reads with 403 when denied, before asking the cluster anything', async () => {
      const permissions = permissionsAllowing(() => AuthorizeResult.DENY);
      const server = await startPlugin({ permissions: permissions.factory });

      const response = await getOrphans(server);

      expect(response.status).toBe(403);
      expect(response.body.error.message).toBe(
        `You are not allowed to view the claims of ${ORDERS} (pvc-pruner.orphans.read)`,
      );
      expect(sim.requests()).toEqual([]);
    });

    it('applies a real conditional policy (catalog "is entity owner") through the permission backend', async () => {
      // The policy: anyone may read; only an owner of the entity may prune.
      class OwnersPrune implements PermissionPolicy {
        async handle(
          query: PolicyQuery,
          user?: PolicyQueryUser,
        ): Promise<PolicyDecision> {
          if (isPermission(query.permission, pvcPrunerPrunePermission)) {
            return ownersOnly(query.permission, user);
          }
          return { result: AuthorizeResult.ALLOW };
        }
      }
      const server = await startPluginWithPolicy(new OwnersPrune());
      const post = (user: string, entityRef = ORDERS) =>
        asUser(user, postPrune(server, prune({ entityRef })));

      // orders is owned by alice: she may prune it, bob may not, though both may read it.
      const alice = await post(ALICE);
      expect(alice.status).toBe(202);
      const bob = await post(BOB);
      expect(bob.status).toBe(403);
      expect(bob.body.error.message).toBe(
        `You are not allowed to prune the claims of ${ORDERS} (pvc-pruner.prune)`,
      );
      const bobReads = await asUser(BOB, getOrphans(server));
      expect(bobReads.status).toBe(200);
      await untilFinished(server, alice.body.id);
    });
  });

  describe('GET /v1/fleet through the permission backend', () => {
    // Only an entity's owners may read its claims; only alice may see unowned StatefulSets.
    class OwnersRead implements PermissionPolicy {
      async handle(
        query: PolicyQuery,
        user?: PolicyQueryUser,
      ): Promise<PolicyDecision> {
        if (isPermission(query.permission, pvcPrunerOrphansReadPermission)) {
          return ownersOnly(query.permission, user);
        }
        if (query.permission.name === 'pvc-pruner.fleet.unowned.read') {
          return {
            result:
              user?.info.userEntityRef === ALICE
                ? AuthorizeResult.ALLOW
                : AuthorizeResult.DENY,
          };
        }
        return { result: AuthorizeResult.ALLOW };
      }
    }

    it('shows an owner their entities, and another user nothing of them: no row, no total, no unowned', async () => {
      const server = await startPluginWithPolicy(new OwnersRead());
      const fleet = (user: string) =>
        request(server)
          .get('/api/pvc-pruner/v1/fleet')
          .set('authorization', mockCredentials.user.header(user));

      const alice = await fleet(ALICE);
      expect(alice.status).toBe(200);
      expect(alice.body.entitiesScanned).toBe(4);
      expect(alice.body.items.map((e: any) => e.entityRef)).toEqual([
        ORDERS,
        'component:default/search',
      ]);
      expect(alice.body.items[0].statefulSets).toEqual([
        expect.objectContaining({
          cluster: 'demo',
          namespace: 'shop',
          name: 'orders-db',
          orphans: expect.any(Number),
        }),
      ]);
      expect(alice.body.totals.orphans).toBeGreaterThan(0);
      // No entity of this catalog maps to the demo's ledger-db or nightly-reports.
      expect(alice.body.unowned.statefulSets.map((s: any) => s.name)).toEqual([
        'ledger-db',
        'nightly-reports',
      ]);

      const bob = await fleet(BOB);
      expect(bob.status).toBe(200);
      expect(bob.body).toEqual({
        clusters: [{ cluster: 'demo', ok: true }],
        entitiesScanned: 0,
        totals: {
          entities: 0,
          statefulSets: 0,
          orphans: 0,
          reclaimableBytes: 0,
          retainedBytes: 0,
        },
        owners: [],
        items: [],
        // Disabled in this config: no run, none due.
        autoPrune: { enabled: false },
      });
    });
  });

  describe('audit', () => {
    it('audits orphan reads with severity low and prunes with severity high, with their outcomes', async () => {
      const { auditor, events } = recordingAuditor();
      const server = await startPlugin({ features: [auditor.factory] });

      await asUser(ALICE, getOrphans(server)).expect(200);
      const posted = await asUser(ALICE, postPrune(server));
      expect(posted.status).toBe(202);
      await getOrphans(server, 'component:default/nope').expect(404);

      const prunes = () => events.filter(e => e.options.eventId === 'prune');
      await waitFor(async () => prunes()[0]?.outcome);
      const reads = events.filter(e => e.options.eventId === 'orphans-read');
      expect(reads.map(e => [e.options.severityLevel, e.outcome])).toEqual([
        ['low', 'success'],
        ['low', 'fail'],
      ]);
      expect(reads[0].meta).toEqual({ orphans: 5 });
      expect(reads[1].error?.name).toBe('NotFoundError');
      expect(prunes()).toHaveLength(1);
      expect(prunes()[0].options).toMatchObject({
        severityLevel: 'high',
        meta: {
          actor: ALICE,
          entityRef: ORDERS,
          cluster: 'demo',
          namespace: 'shop',
          statefulSet: 'orders-db',
          pvcs: ['data-orders-db-2', 'data-orders-db-3'],
          dryRun: true,
        },
      });
      expect(prunes()[0]).toMatchObject({
        outcome: 'success',
        meta: {
          jobId: posted.body.id,
          outcome: 'succeeded',
          deleted: ['data-orders-db-2', 'data-orders-db-3'],
        },
      });
    });
  });

  describe('limits', () => {
    /** The plugin on a database the test reads and writes too, with `running` jobs of ALICE's already queued. */
    async function startWithQueuedJobs(
      running: Array<{ statefulSet: string; requestedBy: string }>,
      limits: JsonObject,
    ) {
      const knex = knexFactory({
        client: 'better-sqlite3',
        connection: ':memory:',
        useNullAsDefault: true,
      });
      const store = await PruneJobStore.create({
        database: mockServices.database({ knex }),
      });
      for (const job of running)
        await store.createJob({
          entityRef: ORDERS,
          cluster: 'demo',
          namespace: 'shop',
          dryRun: true,
          pvcs: ordersOrphans(),
          ...job,
        });
      const server = await startPlugin({
        config: config(sim, {
          pvcPruner: { leaseDurationSeconds: 5, limits },
        }),
        features: [mockServices.database.factory({ knex })],
      });
      return { server, close: () => knex.destroy() };
    }

    it('refuses a prune with 429 when the user already runs pvcPruner.limits.runningJobsPerUser jobs, saying so, and asks the cluster nothing', async () => {
      const { server, close } = await startWithQueuedJobs(
        [
          { statefulSet: 'cart-db', requestedBy: ALICE },
          { statefulSet: 'search-index', requestedBy: ALICE },
        ],
        { runningJobsPerUser: 2 },
      );
      try {
        const response = await asUser(ALICE, postPrune(server));

        expect(response.status).toBe(429);
        expect(response.body.error.message).toBe(
          'You have 2 prune jobs running, dry runs included (the limit is 2); wait for one to finish',
        );
        expect(sim.requests()).toEqual([]);
        // Another user is not counted against.
        const bob = await asUser(BOB, postPrune(server));
        expect(bob.status).toBe(202);
        await untilFinished(server, bob.body.id);
      } finally {
        await close();
      }
    });

    it('refuses a prune with 429 when its StatefulSet already runs 3 jobs, whoever asked for them', async () => {
      const { server, close } = await startWithQueuedJobs(
        ['carol', 'dave', 'erin'].map(name => ({
          statefulSet: 'orders-db',
          requestedBy: `user:default/${name}`,
        })),
        {},
      );
      try {
        const response = await asUser(ALICE, postPrune(server));

        expect(response.status).toBe(429);
        expect(response.body.error.message).toBe(
          'StatefulSet shop/orders-db in cluster "demo" has 3 prune jobs running, dry runs included (the limit is 3); wait for one to finish',
        );
        expect(sim.requests()).toEqual([]);
      } finally {
        await close();
      }
    });
  });

  describe('with the permission framework off', () => {
    it('refuses every prune and dry run, says how to enable the framework or opt out, and writes nothing', async () => {
      const logger = mockServices.logger.mock();
      const server = await startPlugin({
        config: config(sim, { permission: { enabled: false } }),
        permissions: frameworkPermissions(),
        features: [logger.factory],
      });

      for (const dryRun of [true, false]) {
        const response = await asUser(
          BOB,
          postPrune(server, prune({ dryRun })),
        );
        expect(response.status).toBe(403);
        expect(response.body.error.message).toBe(
          PERMISSION_FRAMEWORK_OFF_REFUSAL,
        );
      }
      expect(PERMISSION_FRAMEWORK_OFF_REFUSAL).toMatch(
        /permission\.enabled: true and install a permission policy.*pvcPruner\.allowPruneWithoutPermissionFramework: true/,
      );
      expect(writes()).toEqual([]);
      expect((await getOrphans(server)).status).toBe(200);
      expect(logger.warn).toHaveBeenCalledWith(
        expect.stringContaining(
          'the permission framework is off (permission.enabled is not true), so every prune and dry run is refused',
        ),
      );
    });

    it('lets every signed-in user prune only with pvcPruner.allowPruneWithoutPermissionFramework: true, and warns', async () => {
      const logger = mockServices.logger.mock();
      const server = await startPlugin({
        config: config(sim, {
          permission: { enabled: false },
          pvcPruner: { allowPruneWithoutPermissionFramework: true },
        }),
        permissions: frameworkPermissions(),
        features: [logger.factory],
      });

      const response = await asUser(BOB, postPrune(server));

      expect(response.status).toBe(202);
      expect(logger.warn).toHaveBeenCalledWith(
        expect.stringContaining('every signed-in user may prune every claim'),
      );
      await untilFinished(server, response.body.id);
    });

    it('does not start with the removed requirePermissionFramework: false, which used to let everyone prune, and says what replaced it', async () => {
      await expect(
        startPlugin({
          config: config(sim, {
            permission: { enabled: false },
            pvcPruner: { requirePermissionFramework: false },
          }),
          permissions: frameworkPermissions(),
        }),
      ).rejects.toThrow(
        /pvcPruner\.requirePermissionFramework was removed.*replace it with pvcPruner\.allowPruneWithoutPermissionFramework: true/,
      );
    });

    it('starts with the removed requirePermissionFramework: true, warning that it is no longer read, and refuses prunes as it asked', async () => {
      const logger = mockServices.logger.mock();
      const server = await startPlugin({
        config: config(sim, {
          permission: { enabled: false },
          pvcPruner: { requirePermissionFramework: true },
        }),
        permissions: frameworkPermissions(),
        features: [logger.factory],
      });

      expect((await postPrune(server)).status).toBe(403);
      expect(logger.warn).toHaveBeenCalledWith(
        expect.stringMatching(
          /pvcPruner\.requirePermissionFramework was removed.*no longer read; remove it/,
        ),
      );
      expect(writes()).toEqual([]);
    });
  });

  describe('bad input', () => {
    const uid = '0b5e6a4c-6f5e-4a8e-9d55-8d3f0c0e9a11';
    const cases: Array<[string, () => request.Test, number, RegExp]> = [];
    let server: any;
    const post = (body: () => unknown) => () => postPrune(server, body());
    cases.push(
      [
        'a malformed entityRef',
        post(() => prune({ entityRef: 'component:' })),
        400,
        /^Malformed entityRef "component:"/,
      ],
      [
        'an unknown entityRef',
        post(() => prune({ entityRef: 'component:default/nope' })),
        404,
        /^Entity component:default\/nope was not found in the catalog$/,
      ],
      [
        'an unknown cluster',
        post(() => prune({ cluster: 'staging' })),
        400,
        /^Unknown cluster "staging"$/,
      ],
      [
        'a cluster other than the entity’s',
        post(() => prune({ entityRef: 'component:default/elsewhere' })),
        403,
        /^Entity component:default\/elsewhere maps to cluster "prod", not "demo"$/,
      ],
      [
        'a namespace other than the entity’s',
        post(() => prune({ entityRef: 'component:default/search' })),
        403,
        /^Entity component:default\/search maps to namespace "search", not "shop"$/,
      ],
      [
        'another entity’s StatefulSet',
        post(() => prune({ entityRef: 'component:default/cart' })),
        403,
        /^StatefulSet shop\/orders-db in cluster "demo" is not one of component:default\/cart's \(selector backstage\.io\/kubernetes-id=cart\)$/,
      ],
      [
        'a StatefulSet that does not exist',
        post(() => prune({ statefulSet: 'nope-db' })),
        403,
        /^StatefulSet shop\/nope-db in cluster "demo" is not one of component:default\/orders's/,
      ],
      [
        'an empty list of claims',
        post(() => prune({ pvcs: [] })),
        400,
        /^Invalid prune request: pvcs: must NOT have fewer than 1 items$/,
      ],
      [
        'the same claim twice',
        post(() =>
          prune({
            pvcs: [
              { name: 'data-orders-db-2', uid },
              { name: 'data-orders-db-2', uid },
            ],
          }),
        ),
        400,
        /^pvcs lists the same claim more than once$/,
      ],
      [
        'dryRun as a string',
        post(() => prune({ dryRun: 'false' })),
        400,
        /^Invalid prune request: dryRun: must be boolean$/,
      ],
      [
        'a claim name as a number',
        post(() => prune({ pvcs: [{ name: 2, uid }] })),
        400,
        /^Invalid prune request: pvcs\.0\.name: must be string$/,
      ],
      [
        'a missing cluster',
        post(() => ({ ...prune(), cluster: undefined })),
        400,
        /^Invalid prune request: cluster: Required$/,
      ],
      [
        'an unknown field',
        post(() => prune({ force: true })),
        400,
        /Unrecognized key\(s\) in object: 'force'/,
      ],
      [
        'a body over 64 kB',
        post(() =>
          prune({
            pvcs: Array.from({ length: 900 }, (_, i) => ({
              name: `data-orders-db-${i}`,
              uid: `${uid}-${'x'.repeat(30)}`,
            })),
          }),
        ),
        413,
        /request entity too large/i,
      ],
      [
        'an entity without Kubernetes annotations',
        post(() => prune({ entityRef: 'component:default/bare' })),
        400,
        /^Entity component:default\/bare has no Kubernetes annotations: add "backstage\.io\/kubernetes-id" or "backstage\.io\/kubernetes-label-selector"/,
      ],
      [
        'a scan of an entity without Kubernetes annotations',
        () => getOrphans(server, 'component:default/bare'),
        400,
        /backstage\.io\/kubernetes-id.*backstage\.io\/kubernetes-label-selector/,
      ],
      [
        'a scan of an unknown entity',
        () => getOrphans(server, 'component:default/nope'),
        404,
        /was not found in the catalog/,
      ],
      [
        'a scan with a malformed entityRef',
        () => getOrphans(server, 'orders'),
        400,
        /^Malformed entityRef "orders"/,
      ],
      [
        'an unknown job id',
        () => request(server).get(`/api/pvc-pruner/v1/prune-jobs/${uid}`),
        404,
        new RegExp(`^No prune job with id "${uid}"$`),
      ],
      [
        'the events of an unknown job',
        () =>
          request(server).get(`/api/pvc-pruner/v1/prune-jobs/${uid}/events`),
        404,
        /^No prune job with id/,
      ],
      [
        'a bad ?after=',
        () =>
          request(server).get(
            `/api/pvc-pruner/v1/prune-jobs/${uid}/events?after=soon`,
          ),
        400,
        /^Invalid query: after: must be the seq of an event$/,
      ],
      [
        'a negative ?after=',
        () =>
          request(server).get(
            `/api/pvc-pruner/v1/prune-jobs/${uid}/events?after=-3`,
          ),
        400,
        /^Invalid query: after: must be the seq of an event$/,
      ],
    );

    it.each(
      cases.map(([what, send, status, message]) => ({
        what,
        send,
        status,
        message,
      })),
    )(
      'answers $status for $what, says what is wrong, and writes nothing to the cluster',
      async ({ send, status, message }) => {
        server = await startPlugin();
        sim.clearRequests();

        const response = await send();

        expect(response.status).toBe(status);
        expect(response.body.error.message).toMatch(message);
        expect(writes()).toEqual([]);
        expect(response.text).not.toContain(sim.token);
      },
    );
  });

  it('never lets a cluster token reach a response, an event, an error, the audit log or the plugin log', async () => {
    const { auditor, events } = recordingAuditor();
    const logger = mockServices.logger.mock();
    const server = await startPlugin({
      config: config(sim, {}, [
        {
          name: 'unreachable',
          url: 'https://127.0.0.1:9',
          authProvider: 'serviceAccount',
          serviceAccountToken: UNREACHABLE_TOKEN,
          skipTLSVerify: true,
        },
      ]),
      features: [auditor.factory, logger.factory],
    });
    const texts: string[] = [];
    const send = async (req: request.Test) => {
      const res = await req;
      texts.push(res.text, JSON.stringify(res.headers));
      return res;
    };

    // A scan failing on both clusters: one unreachable, one refusing (its watch cache's lists too).
    const refusal = sim.addFault({
      verb: 'list',
      resource: 'persistentvolumeclaims',
      status: 401,
    });
    const scan = await send(getOrphans(server));
    expect(
      scan.body.clusters.find((c: any) => c.cluster === 'unreachable'),
    ).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('unreachable') },
    });
    expect(
      scan.body.clusters.find((c: any) => c.cluster === 'demo'),
    ).toMatchObject({ ok: false, error: { statusCode: 401 } });
    await waitFor(async () =>
      sim
        .requests()
        .some(
          r => r.path === '/api/v1/persistentvolumeclaims' && r.status === 401,
        ),
    );
    sim.faults.remove(refusal);
    // The cache stays off after its refusal, so this scan reads live, and is answered.
    const answered = await send(getOrphans(server));
    expect(
      answered.body.clusters.find((c: any) => c.cluster === 'demo'),
    ).toMatchObject({ ok: true });
    sim.addFault({
      verb: 'delete',
      resource: 'persistentvolumeclaims',
      status: 403,
    });
    const posted = await send(postPrune(server, prune({ dryRun: false })));
    expect(posted.status).toBe(202);
    const job = await waitFor(async () => {
      const res = await send(
        request(server).get(`/api/pvc-pruner/v1/prune-jobs/${posted.body.id}`),
      );
      return res.body.finishedAt ? res.body : undefined;
    });
    expect(job.status).toBe('failed');
    expect(job.summary.failed).toHaveLength(2);
    await send(
      request(server).get(
        `/api/pvc-pruner/v1/prune-jobs/${posted.body.id}/events`,
      ),
    );
    await send(
      request(server)
        .get('/api/pvc-pruner/v1/prune-jobs')
        .query({ entityRef: ORDERS }),
    );
    // Prunes on the unreachable cluster, and with an unknown one.
    const elsewhere = await send(
      postPrune(server, prune({ cluster: 'unreachable' })),
    );
    expect(elsewhere.status).toBe(503);
    expect(elsewhere.body.error).toMatchObject({
      name: 'ServiceUnavailableError',
      message: expect.stringMatching(
        /^cluster "unreachable" is unreachable for list statefulsets: ECONNREFUSED$/,
      ),
    });
    await send(postPrune(server, prune({ cluster: 'nope' })));

    const audit = JSON.stringify(
      events.map(e => ({
        meta: e.options.meta,
        outcome: e.outcome,
        outcomeMeta: e.meta,
        error: e.error && { message: e.error.message, stack: e.error.stack },
      })),
    );
    const logged = JSON.stringify(
      ['debug', 'info', 'warn', 'error'].flatMap(level =>
        (logger as any)[level].mock.calls.map((args: unknown[]) =>
          args.map(a => (a instanceof Error ? `${a.message} ${a.stack}` : a)),
        ),
      ),
    );
    for (const text of [...texts, audit, logged]) {
      expect(text).not.toContain(sim.token);
      expect(text).not.toContain(UNREACHABLE_TOKEN);
    }
    expect(texts.join('\n')).toContain('403 Forbidden');
    expect(events.length).toBeGreaterThanOrEqual(5);
  });

  describe('ownership, whatever a catalog entity claims', () => {
    const PAYMENTS = 'user:default/carol';
    const ledger = component(
      'ledger',
      {
        'backstage.io/kubernetes-id': 'ledger',
        'pvc-pruner.test/claims-visible-to': 'owners',
      },
      PAYMENTS,
    );
    /** What bob (another team) may write in catalog YAML: a catch-all selector, and another team's id. */
    const catchAll = component(
      'everything',
      { 'backstage.io/kubernetes-label-selector': '!nonexistent' },
      BOB,
    );
    const borrowed = component(
      'my-search',
      { 'backstage.io/kubernetes-id': 'search-index' },
      BOB,
    );

    /** As the demo's: everyone reads but the owners-only entities' claims; only owners prune; basic permissions allowed. */
    class DemoLikePolicy implements PermissionPolicy {
      async handle(
        query: PolicyQuery,
        user?: PolicyQueryUser,
      ): Promise<PolicyDecision> {
        if (isPermission(query.permission, pvcPrunerOrphansReadPermission))
          return createCatalogConditionalDecision(query.permission, {
            anyOf: [
              catalogConditions.isEntityOwner({
                claims: user?.info.ownershipEntityRefs ?? [],
              }),
              {
                not: catalogConditions.hasAnnotation({
                  annotation: 'pvc-pruner.test/claims-visible-to',
                  value: 'owners',
                }),
              },
            ],
          });
        if (isPermission(query.permission, pvcPrunerPrunePermission))
          return ownersOnly(query.permission, user);
        return { result: AuthorizeResult.ALLOW };
      }
    }

    const claimOf = (namespace: string, name: string) => ({
      name,
      uid: sim.store.get('persistentvolumeclaims', namespace, name)!.metadata
        .uid,
    });

    it('lists nothing of another team’s StatefulSets through a catch-all selector, and names who else claims them', async () => {
      const server = await startPluginWithPolicy(new DemoLikePolicy(), [
        ...ENTITIES,
        ledger,
        catchAll,
      ]);

      const response = await asUser(
        BOB,
        getOrphans(server, 'component:default/everything'),
      );

      expect(response.status).toBe(200);
      const text = JSON.stringify(response.body);
      expect(text).not.toContain('ledger-db');
      expect(response.body.clusters[0].withheld).toEqual({
        statefulSets: 1,
        refusedClaimants: ['component:default/ledger'],
      });
      // What other entities claim and bob may read is shown, saying who else claims it.
      const orders = response.body.clusters[0].statefulSets.find(
        (s: { name: string }) => s.name === 'orders-db',
      );
      // (elsewhere claims orders-db only in cluster prod.)
      expect(orders.sharedWith).toEqual([ORDERS]);
    });

    it.each([
      [
        'a catch-all selector',
        'component:default/everything',
        'payments',
        'ledger-db',
        'data-ledger-db-1',
        'component:default/ledger',
      ],
      [
        'a borrowed kubernetes-id',
        'component:default/my-search',
        'search',
        'search-index',
        'data-search-index-2',
        'component:default/search',
      ],
    ])(
      'refuses a prune through %s of another team’s StatefulSet with 403 naming its claimant, and deletes nothing',
      async (_how, entityRef, namespace, statefulSet, claim, claimant) => {
        const server = await startPluginWithPolicy(new DemoLikePolicy(), [
          ...ENTITIES,
          ledger,
          catchAll,
          borrowed,
        ]);

        const response = await asUser(
          BOB,
          postPrune(
            server,
            prune({
              entityRef,
              namespace,
              statefulSet,
              pvcs: [claimOf(namespace, claim)],
              dryRun: false,
            }),
          ),
        );

        expect(response.status).toBe(403);
        expect(response.body.error.message).toContain(
          `is also claimed by ${claimant}`,
        );
        expect(sim.requests().filter(r => r.verb === 'delete')).toEqual([]);
        expect(
          sim.store.get('persistentvolumeclaims', namespace, claim)?.metadata
            .deletionTimestamp,
        ).toBeUndefined();
      },
    );

    it('holds the owners back too while an entity they may not prune claims their StatefulSet: the refusal names it, so it can be removed', async () => {
      const server = await startPluginWithPolicy(new DemoLikePolicy(), [
        ...ENTITIES,
        catchAll,
      ]);

      const response = await asUser(ALICE, postPrune(server));

      expect(response.status).toBe(403);
      expect(response.body.error.message).toContain(
        'is also claimed by component:default/everything',
      );
    });

    it('prunes a StatefulSet no entity claims, without an entity, for holders of pvc-pruner.unowned.prune; a claimed one is refused', async () => {
      const server = await startPluginWithPolicy(new DemoLikePolicy(), [
        ...ENTITIES,
        ledger,
      ]);
      const reports = (
        await asUser(
          BOB,
          request(server).get('/api/pvc-pruner/v1/unowned/orphans').query({
            cluster: 'demo',
            namespace: 'search',
            statefulSet: 'nightly-reports',
          }),
        )
      ).body;
      expect(reports.statefulSet.name).toBe('nightly-reports');
      const orphans = reports.statefulSet.orphans.map(
        (o: { name: string; uid: string }) => ({ name: o.name, uid: o.uid }),
      );
      expect(orphans.length).toBeGreaterThan(0);

      const unowned = await asUser(
        BOB,
        postPrune(server, {
          cluster: 'demo',
          namespace: 'search',
          statefulSet: 'nightly-reports',
          pvcs: orphans,
          dryRun: true,
        }),
      );
      expect(unowned.status).toBe(202);
      const job = await untilFinished(server, unowned.body.id);
      expect(job).toBeTruthy();
      const read = await asUser(
        BOB,
        request(server).get(`/api/pvc-pruner/v1/prune-jobs/${unowned.body.id}`),
      );
      expect(read.body).toMatchObject({ status: 'succeeded' });
      expect(read.body.entityRef).toBeUndefined();

      const claimed = await asUser(
        BOB,
        postPrune(server, {
          cluster: 'demo',
          namespace: 'payments',
          statefulSet: 'ledger-db',
          pvcs: [claimOf('payments', 'data-ledger-db-1')],
          dryRun: true,
        }),
      );
      expect(claimed.status).toBe(403);
      expect(claimed.body.error.message).toContain(
        'is claimed by component:default/ledger',
      );
    });
  });

  describe('the namespace binding (pvcPruner.ownership.namespaceOwnerAnnotation)', () => {
    function annotateShop(owner?: string) {
      const ns = structuredClone(
        sim.store.require('namespaces', undefined, 'shop'),
      );
      ns.metadata.annotations = owner ? { 'backstage.io/owner': owner } : {};
      sim.store.update('namespaces', ns);
    }
    afterEach(() => annotateShop());

    const startBound = () =>
      startPlugin({
        config: config(sim, {
          pvcPruner: {
            leaseDurationSeconds: 5,
            volumeWaitTimeoutSeconds: 5,
            ownership: { namespaceOwnerAnnotation: 'backstage.io/owner' },
          },
        }),
      });

    it('prunes only where the namespace names the owner of every entity that claims the StatefulSet', async () => {
      const server = await startBound();

      annotateShop('group:default/payments');
      const refused = await asUser(ALICE, postPrune(server));
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toMatch(
        /^Namespace shop names group:default\/payments in its backstage.io\/owner annotation, not component:default\/orders or its owner \(user:default\/alice\)/,
      );
      expect(writes()).toEqual([]);

      annotateShop('group:default/payments, user:default/alice');
      const allowed = await asUser(ALICE, postPrune(server));
      expect(allowed.status).toBe(202);
      await untilFinished(server, allowed.body.id);
    });
  });
});
