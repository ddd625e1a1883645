import { TEST_SEAL } from './__testUtils__/testSeal';
import { BackstageCredentials } from '@backstage/backend-plugin-api';
import {
  mockCredentials,
  mockErrorHandler,
  mockServices,
} from '@backstage/backend-test-utils';
import { Entity } from '@backstage/catalog-model';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  OrphansResponse,
  pvcPrunerOrphansReadPermission,
  pvcPrunerPrunePermission,
  PruneJob,
  PruneRequest,
  emptyPruneSummary,
  KeptSnapshot,
} from 'backstage-plugin-pvc-pruner-common';
import { SnapshotKeeper } from './snapshots';
import { LeftBehindAccess, LeftBehindFinder } from './leftBehind';
import express from 'express';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import knexFactory, { Knex } from 'knex';
import request from 'supertest';
import { createRouter, RouterOptions } from './router';
import { FleetService, UnownedOrphans } from './fleet';
import { NamespaceOwners, OwnershipChecks, WorkloadCatalog } from './ownership';
import { PruneJobStore } from './database';
import { JobEvents, PruneJobs, PruneResult } from './jobs';
import {
  EntityWorkloads,
  EntityWorkloadTarget,
  OrphanAnnotator,
  OrphanFinder,
} from './orphans';
import { OrphanSightingStore } from './database';
import { ClusterRegistry } from './kubernetes';
import { OpenStreamLimits } from './limits';
import { eventually } from './__testUtils__/eventually';
import {
  FakeRestoreCluster,
  JOB_ID,
  prunersSnapshot,
  SNAPSHOT_NAME,
  SNAPSHOT_UID,
} from './__testUtils__/fakeRestoreCluster';
import { KeptSnapshots, SnapshotRestorer } from './snapshots';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { componentEntity } from './__testUtils__/catalogEntities';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import type { ClusterDetails } from '@backstage/plugin-kubernetes-node';

type JobStart = Parameters<PruneJobs['start']>[0];

/*
 * createRouter with the real catalog lookup (EntityWorkloads on the catalog
 * mock), the real job store and event log (SQLite in memory), and fakes for
 * the two services that would talk to Kubernetes (OrphanFinder, PruneJobs):
 * what the router lets through to them, and what it answers, is the subject.
 */

const ORDERS = 'component:default/orders';
const ALICE = 'user:default/alice';

function entity(name: string, annotations?: Record<string, string>): Entity {
  return componentEntity(name, { annotations });
}

const ENTITIES = [
  entity('orders'),
  entity('bare', {}),
  entity('pinned', {
    'backstage.io/kubernetes-label-selector': 'app=pinned',
    'backstage.io/kubernetes-namespace': 'shop',
    'backstage.io/kubernetes-cluster': 'prod',
  }),
];

const SCAN: OrphansResponse = {
  entityRef: ORDERS,
  clusters: [{ cluster: 'demo', ok: true, statefulSets: [] }],
  totals: { orphans: 3, reclaimableBytes: 3, retainedBytes: 0 },
};

function validPrune(overrides: Record<string, unknown> = {}): PruneRequest {
  return {
    entityRef: ORDERS,
    cluster: 'demo',
    namespace: 'shop',
    statefulSet: 'orders-db',
    pvcs: [
      { name: 'data-orders-db-2', uid: '7f1c8a56-1111-4c1e-9d7a-000000000002' },
      { name: 'data-orders-db-3', uid: '7f1c8a56-1111-4c1e-9d7a-000000000003' },
    ],
    ...overrides,
  } as PruneRequest;
}

describe('createRouter', () => {
  let knex: Knex;
  let store: PruneJobStore;
  let events: JobEvents;
  let permissions: ReturnType<typeof mockServices.permissions.mock>;
  let audit: ReturnType<typeof recordingAuditor>;
  let findForEntity: jest.Mock<
    Promise<OrphansResponse>,
    [EntityWorkloadTarget, KubernetesRequestAuth?]
  >;
  let start: jest.Mock<Promise<PruneJob>, [JobStart]>;
  const findLeftBehind = jest.fn<
    ReturnType<LeftBehindFinder['findForEntity']>,
    Parameters<LeftBehindFinder['findForEntity']>
  >(async target => ({ entityRef: target.entityRef, clusters: [] }));
  const keepSnapshot = jest.fn<
    Promise<KeptSnapshot>,
    Parameters<SnapshotKeeper['keep']>
  >();
  let app: express.Express;
  let restoreCluster: FakeRestoreCluster;
  let listSnapshots: jest.Mock<
    ReturnType<KeptSnapshots['list']>,
    Parameters<KeptSnapshots['list']>
  >;
  const scanCluster = jest.fn(
    async (cluster: ClusterDetails, targets: EntityWorkloadTarget[]) => ({
      cluster: cluster.name,
      byEntity: new Map(targets.map(t => [t.entityRef, []])),
      unowned: [],
      objects: new Map(),
    }),
  );

  async function makeApp(overrides: Partial<RouterOptions> = {}) {
    const catalog = catalogServiceMock({ entities: ENTITIES });
    const workloads = new WorkloadCatalog({
      catalog,
      auth: mockServices.auth(),
      logger: mockServices.logger.mock(),
    });
    const ownership = new OwnershipChecks({
      permissions,
      workloads,
      namespaceOwners: new NamespaceOwners(),
    });
    const router = await createRouter({
      httpAuth: mockServices.httpAuth(),
      permissions,
      auditor: audit.auditor,
      entityWorkloads: new EntityWorkloads(
        catalogServiceMock({ entities: ENTITIES }),
      ),
      orphanFinder: { findForEntity } as unknown as OrphanFinder,
      leftBehind: {
        finder: { findForEntity: findLeftBehind },
        access: new LeftBehindAccess({
          permissions,
          finder: { groupsIn: async () => [] },
          ownership,
          workloads,
        }),
      },
      jobs: { start } as unknown as PruneJobs,
      store,
      events,
      clusters: ClusterRegistry.of(
        [
          {
            name: 'prod',
            url: 'https://k8s.example.com',
            authMetadata: {
              'kubernetes.io/auth-provider': 'serviceAccount',
              serviceAccountToken: 'secret-sa-token',
            },
          },
          {
            name: 'eks',
            title: 'EKS production',
            url: 'https://eks.example.com',
            authMetadata: { 'kubernetes.io/auth-provider': 'aws' },
          },
          {
            name: 'corp',
            url: 'https://corp.example.com',
            authMetadata: {
              'kubernetes.io/auth-provider': 'oidc',
              'kubernetes.io/oidc-token-provider': 'okta',
            },
          },
        ],
        mockServices.logger.mock(),
      ),
      eventStreams: new OpenStreamLimits(20),
      fleet: new FleetService({
        catalog,
        permissions,
        orphanFinder: {
          clustersOf: async () =>
            ['demo', 'prod'].map(name => ({ name } as ClusterDetails)),
          scanCluster: scanCluster,
        } as unknown as OrphanFinder,
        annotator: new OrphanAnnotator(
          await OrphanSightingStore.create({
            database: { getClient: async () => knex },
          }),
        ),
        workloads,
        ownership,
      }),
      unowned: new UnownedOrphans({
        permissions,
        orphanFinder: {} as OrphanFinder,
        ownership,
      }),
      ownership,
      snapshotKeeper: { keep: keepSnapshot } as unknown as SnapshotKeeper,
      keptSnapshots: { list: listSnapshots },
      restorer: new SnapshotRestorer({
        gateways: { for: async () => restoreCluster.asGateway() },
        ownership,
        store,
        events,
        seal: TEST_SEAL,
      }),
      ...overrides,
    });
    return express().use(router).use(mockErrorHandler());
  }

  /** A job in the store, as PruneJobs.start leaves it. */
  async function storedJob(entityRef = ORDERS) {
    return store.createJob({
      entityRef,
      cluster: 'demo',
      namespace: 'shop',
      statefulSet: 'orders-db',
      dryRun: false,
      requestedBy: ALICE,
      pvcs: validPrune().pvcs,
    });
  }

  /** Appends events up to and including job-finished, so the job's log is complete. */
  async function finishJob(id: string) {
    await events.append({ jobId: id, type: 'job-started', message: 'started' });
    await events.append({
      jobId: id,
      type: 'pvc-deleting',
      pvc: 'data-orders-db-2',
      message: 'deleting',
    });
    await events.append({
      jobId: id,
      type: 'pvc-deleted',
      pvc: 'data-orders-db-2',
      message: 'deleted',
    });
    await store.updateJob(id, {
      status: 'succeeded',
      finishedAt: new Date().toISOString(),
    });
    await events.append({
      jobId: id,
      type: 'job-finished',
      status: 'succeeded',
      message: 'done',
    });
  }

  /** Denies every permission the router asks for. */
  function denyEverything() {
    permissions.authorize.mockResolvedValue([{ result: AuthorizeResult.DENY }]);
  }

  const getOrphans = (query: object) =>
    request(app).get('/v1/orphans').query(query);

  const postPrune = (body: unknown) =>
    request(app)
      .post('/v1/prune-jobs')
      .send(body as object);

  /** The prune was audited with severity high, and as refused. */
  function expectPruneAuditedAsRefused() {
    expect(audit.events[0]).toMatchObject({
      options: { eventId: 'prune', severityLevel: 'high' },
      outcome: 'fail',
    });
  }

  /** The router answered 400 with an InputError saying `message`. */
  function expectInputError(response: request.Response, message: RegExp) {
    expect(response.status).toBe(400);
    expect(response.body.error.name).toBe('InputError');
    expect(response.body.error.message).toMatch(message);
  }

  /** A refused prune leaves reading alone. */
  async function expectOrphansStillReadable() {
    expect((await getOrphans({ entityRef: ORDERS })).status).toBe(200);
  }

  beforeEach(async () => {
    knex = knexFactory({
      client: 'better-sqlite3',
      connection: { filename: ':memory:' },
      useNullAsDefault: true,
    });
    store = await PruneJobStore.create({
      database: { getClient: async () => knex },
    });
    events = new JobEvents(store);
    permissions = mockServices.permissions.mock();
    permissions.authorize.mockImplementation(async requests =>
      requests.map(() => ({ result: AuthorizeResult.ALLOW })),
    );
    audit = recordingAuditor();
    findForEntity = jest.fn(async (_target: EntityWorkloadTarget) => SCAN);
    findLeftBehind.mockClear();
    restoreCluster = new FakeRestoreCluster();
    listSnapshots = jest.fn(async (target: EntityWorkloadTarget) => ({
      entityRef: target.entityRef,
      clusters: [{ cluster: 'demo', ok: true as const, statefulSets: [] }],
      totals: { snapshots: 0, bytes: 0 },
    })) as unknown as typeof listSnapshots;
    start = jest.fn(async ({ request: req, target, credentials }: JobStart) =>
      store.createJob({
        ...req,
        entityRef: target?.entityRef,
        dryRun: Boolean(req.dryRun),
        requestedBy: credentials.principal.userEntityRef,
      }),
    );
    app = await makeApp();
  });

  afterEach(async () => {
    await knex.destroy();
  });

  it('answers GET /health with status ok', async () => {
    const response = await request(app).get('/health');

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('serves the OpenAPI spec it validates against at /openapi.json', async () => {
    const response = await request(app).get('/openapi.json');

    expect(response.status).toBe(200);
    expect(Object.keys(response.body.paths)).toEqual([
      '/health',
      '/v1/clusters',
      '/v1/orphans',
      '/v1/left-behind',
      '/v1/fleet',
      '/v1/unowned/orphans',
      '/v1/prune-jobs',
      '/v1/prune-jobs/{id}',
      '/v1/prune-jobs/{id}/events',
      '/v1/snapshots',
      '/v1/snapshots/keep',
      '/v1/restores',
      '/v1/released-volumes',
      '/v1/reclaim-jobs',
      '/v1/claim-keeps',
      '/v1/claim-keeps/{uid}',
    ]);
    expect(response.body.components.schemas.PruneRequest.required).toEqual([
      'cluster',
      'namespace',
      'statefulSet',
      'pvcs',
    ]);
  });

  it.each([
    ['GET /v1/clusters', () => request(app).get('/v1/clusters')],
    ['GET /v1/orphans', () => getOrphans({ entityRef: ORDERS })],
    ['GET /v1/fleet', () => request(app).get('/v1/fleet')],
    ['POST /v1/prune-jobs', () => postPrune(validPrune())],
  ])(
    'refuses %s without credentials with 401, scanning and starting nothing',
    async (_route, send) => {
      scanCluster.mockClear();

      const response = await send().set(
        'authorization',
        mockCredentials.none.header(),
      );

      expect(response.status).toBe(401);
      expect(findForEntity).not.toHaveBeenCalled();
      expect(scanCluster).not.toHaveBeenCalled();
      expect(start).not.toHaveBeenCalled();
    },
  );

  it('answers 404 for unknown routes', async () => {
    expect((await request(app).get('/v1/unknown')).status).toBe(404);
    expect((await request(app).delete('/v1/prune-jobs/x')).status).toBe(404);
  });

  describe('GET /v1/clusters', () => {
    it('lists each cluster with its auth provider and, for client-side providers, the token the card must send; never a credential', async () => {
      const response = await request(app)
        .get('/v1/clusters')
        .set('authorization', mockCredentials.user.header(ALICE));

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        items: [
          { name: 'prod', authProvider: 'serviceAccount' },
          { name: 'eks', title: 'EKS production', authProvider: 'aws' },
          { name: 'corp', authProvider: 'oidc', userTokenKey: 'oidc.okta' },
        ],
      });
      expect(response.text).not.toContain('secret-sa-token');
    });
  });

  describe('GET /v1/orphans', () => {
    it('hands the scan the user tokens of the Backstage-Kubernetes-Authorization-* headers, as the Kubernetes proxy reads them', async () => {
      await getOrphans({ entityRef: ORDERS })
        .set('Backstage-Kubernetes-Authorization-oidc-okta', 'okta-id-token')
        .set('Backstage-Kubernetes-Authorization-google', 'google-token');

      expect(findForEntity).toHaveBeenCalledWith(
        expect.anything(),
        { oidc: { okta: 'okta-id-token' }, google: 'google-token' },
        expect.any(Function),
      );
    });

    it('resolves the entity, checks pvc-pruner.orphans.read on it, and returns the scan', async () => {
      const response = await getOrphans({ entityRef: 'Component:orders' }).set(
        'authorization',
        mockCredentials.user.header(ALICE),
      );

      expect(response.status).toBe(200);
      expect(response.body).toEqual(SCAN);
      // The ref is normalised (kind lower-cased, default namespace) before the permission check.
      expect(permissions.authorize).toHaveBeenCalledTimes(1);
      const [requests, { credentials }] = permissions.authorize.mock.calls[0];
      expect(requests).toEqual([
        { permission: pvcPrunerOrphansReadPermission, resourceRef: ORDERS },
      ]);
      expect(
        (credentials as BackstageCredentials<any>).principal,
      ).toMatchObject({ type: 'user', userEntityRef: ALICE });
      expect(findForEntity).toHaveBeenCalledWith(
        expect.objectContaining({
          entityRef: ORDERS,
          labelSelector: 'backstage.io/kubernetes-id=orders',
        }),
        {},
        expect.any(Function),
      );
    });

    it('accepts service credentials too', async () => {
      const response = await getOrphans({ entityRef: ORDERS }).set(
        'authorization',
        mockCredentials.service.header(),
      );

      expect(response.status).toBe(200);
      expect(
        permissions.authorize.mock.calls[0][1].credentials.principal,
      ).toMatchObject({ type: 'service' });
    });

    it('answers 403 when the permission is denied, without scanning', async () => {
      denyEverything();

      const response = await getOrphans({ entityRef: ORDERS });

      expect(response.status).toBe(403);
      expect(response.body.error).toMatchObject({
        name: 'NotAllowedError',
        message: `You are not allowed to view the claims of ${ORDERS} (pvc-pruner.orphans.read)`,
      });
      expect(findForEntity).not.toHaveBeenCalled();
    });

    it('treats anything but ALLOW (e.g. an unresolved CONDITIONAL) as a denial', async () => {
      permissions.authorize.mockResolvedValue([
        { result: AuthorizeResult.CONDITIONAL } as any,
      ]);

      expect((await getOrphans({ entityRef: ORDERS })).status).toBe(403);
      expect(findForEntity).not.toHaveBeenCalled();
    });

    it('audits each read with severity low, and its outcome', async () => {
      await getOrphans({ entityRef: ORDERS }).expect(200);
      denyEverything();
      await getOrphans({ entityRef: ORDERS }).expect(403);

      expect(audit.events).toHaveLength(2);
      expect(audit.events[0].options).toMatchObject({
        eventId: 'orphans-read',
        severityLevel: 'low',
        meta: { entityRef: ORDERS },
      });
      expect(audit.events[0].options.request).toBeDefined();
      expect(audit.events[0]).toMatchObject({
        outcome: 'success',
        meta: { orphans: 3 },
      });
      expect(audit.events[1]).toMatchObject({
        outcome: 'fail',
        error: expect.objectContaining({ name: 'NotAllowedError' }),
      });
    });

    it.each([
      [{}, /^Invalid query: entityRef: Required/],
      [
        { entityRef: '' },
        /^Invalid query: entityRef: must NOT have fewer than 1 characters$/,
      ],
      [
        { entityRef: 'component:' },
        /^Malformed entityRef "component:": Entity reference "component:" was not on the form/,
      ],
      [
        { entityRef: 'orders' },
        /^Malformed entityRef "orders": .*missing or empty kind/,
      ],
      [{ 'entityRef[]': ORDERS }, /^Invalid query: entityRef: must be string$/],
    ])('answers 400 for the query %j', async (query, message) => {
      const response = await getOrphans(query);

      expectInputError(response, message);
      expect(findForEntity).not.toHaveBeenCalled();
    });

    it('answers 404 for an entity the catalog does not have', async () => {
      const response = await getOrphans({
        entityRef: 'component:default/nope',
      });

      expect(response.status).toBe(404);
      expect(response.body.error.message).toBe(
        'Entity component:default/nope was not found in the catalog',
      );
    });

    it('answers 400 naming the annotations for an entity without Kubernetes annotations', async () => {
      const response = await getOrphans({
        entityRef: 'component:default/bare',
      });

      expect(response.status).toBe(400);
      expect(response.body.error.message).toContain(
        'backstage.io/kubernetes-id',
      );
      expect(response.body.error.message).toContain(
        'backstage.io/kubernetes-label-selector',
      );
      expect(findForEntity).not.toHaveBeenCalled();
    });
  });

  describe('GET /v1/fleet', () => {
    const fleet = (query: Record<string, string>, user = ALICE) =>
      request(app)
        .get('/v1/fleet')
        .query(query)
        .set('authorization', mockCredentials.user.header(user));

    it('answers the fleet of the caller, asking the permission framework once with their credentials', async () => {
      scanCluster.mockClear();
      const response = await fleet({});
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        clusters: [
          { cluster: 'demo', ok: true },
          { cluster: 'prod', ok: true },
        ],
        entitiesScanned: 2,
        items: [],
        totals: { entities: 0, orphans: 0 },
      });
      expect(permissions.authorize).toHaveBeenCalledTimes(1);
      expect(permissions.authorize.mock.calls[0][1]).toEqual({
        credentials: mockCredentials.user(ALICE),
      });
      expect(scanCluster).toHaveBeenCalledTimes(2);
      expect(audit.events).toEqual([
        expect.objectContaining({
          options: expect.objectContaining({
            eventId: 'fleet-read',
            severityLevel: 'low',
          }),
          outcome: 'success',
        }),
      ]);
    });

    it('is for users only: a service is refused with 403 and nothing is scanned or audited, no credentials with 401', async () => {
      scanCluster.mockClear();

      const service = await request(app)
        .get('/v1/fleet')
        .set('authorization', mockCredentials.service.header());
      const none = await request(app)
        .get('/v1/fleet')
        .set('authorization', mockCredentials.none.header());

      expect(service.status).toBe(403);
      expect(service.body.error.name).toBe('NotAllowedError');
      expect(none.status).toBe(401);
      expect(scanCluster).not.toHaveBeenCalled();
      expect(permissions.authorize).not.toHaveBeenCalled();
      expect(audit.events).toEqual([]);
    });

    it.each<[Record<string, string>, RegExp]>([
      [
        { cluster: 'staging' },
        /Unknown cluster "staging": the configured clusters are "demo", "prod"/,
      ],
      [
        { namespace: 'Shop!' },
        /Invalid query: namespace: must be a lowercase RFC 1123 name/,
      ],
      [{ owner: 'group:' }, /Invalid owner "group:"/],
      [{ limit: '0' }, /^Invalid query: limit: must be >= 1$/],
      [{ limit: 'ten' }, /^Invalid query: limit: must be integer$/],
      [{ cursor: '%%%' }, /Invalid cursor/],
      [{ team: 'checkout' }, /^Unknown query parameter 'team'$/],
    ])(
      'answers %j with 400 and what is wrong, before asking any cluster',
      async (query, message) => {
        scanCluster.mockClear();
        const response = await fleet(query);
        expectInputError(response, message);
        expect(scanCluster).not.toHaveBeenCalled();
      },
    );
  });

  describe('GET /v1/left-behind', () => {
    it('checks pvc-pruner.orphans.read on the entity, and shows a group only to who may read every claimant', async () => {
      const grabbed = {
        namespace: 'shop',
        statefulSet: { name: 'old-db', uid: 'u' },
        evidence: 'lineage' as const,
        claimants: [ORDERS, 'component:default/payments'],
        crowded: false,
        report: {} as any,
      };
      let verdicts: unknown;
      findLeftBehind.mockImplementationOnce(async (target, _auth, admit) => {
        verdicts = await admit([grabbed]);
        return { entityRef: target.entityRef, clusters: [] };
      });
      permissions.authorize.mockImplementation(async requests =>
        requests.map(r => ({
          result:
            'resourceRef' in r && r.resourceRef === ORDERS
              ? AuthorizeResult.ALLOW
              : AuthorizeResult.DENY,
        })),
      );

      const response = await request(app)
        .get('/v1/left-behind')
        .query({ entityRef: ORDERS });

      expect(response.status).toBe(200);
      expect(verdicts).toEqual([
        { refused: ['component:default/payments'], crowded: false },
      ]);
    });

    it('answers 403 when orphans.read is denied on the entity, without reading a cluster', async () => {
      denyEverything();
      const response = await request(app)
        .get('/v1/left-behind')
        .query({ entityRef: ORDERS });
      expect(response.status).toBe(403);
      expect(findLeftBehind).not.toHaveBeenCalled();
    });
  });

  describe('POST /v1/prune-jobs with leftBy', () => {
    it('hands the job the deleted StatefulSet form', async () => {
      const body = validPrune({
        leftBy: { evidence: 'lineage', statefulSetUid: 'deleted-uid' },
      });
      const response = await postPrune(body);
      expect(response.status).toBe(202);
      expect(start.mock.calls[0][0].request.leftBy).toEqual(body.leftBy);
    });

    it.each([
      ['an unknown evidence', { evidence: 'hunch' }],
      ['no evidence', { statefulSetUid: 'u' }],
      ['an unknown field', { evidence: 'lineage', force: true }],
      [
        'a typed name that is no Kubernetes name',
        { evidence: 'name-and-labels', typedNames: ['Not A Name'] },
      ],
    ])('answers 400 for %s, starting nothing', async (_, leftBy) => {
      const response = await postPrune(validPrune({ leftBy } as any));
      expect(response.status).toBe(400);
      expect(start).not.toHaveBeenCalled();
    });

    it('answers 403 when pvc-pruner.prune is denied on the entity, starting nothing', async () => {
      denyEverything();
      const response = await postPrune(
        validPrune({ leftBy: { evidence: 'lineage', statefulSetUid: 'u' } }),
      );
      expect(response.status).toBe(403);
      expect(start).not.toHaveBeenCalled();
    });
  });

  describe('POST /v1/prune-jobs', () => {
    it('starts a job for a user allowed pvc-pruner.prune on the entity, and answers 202 with its id', async () => {
      const response = await postPrune(
        validPrune({ entityRef: 'Component:orders', dryRun: true }),
      ).set('authorization', mockCredentials.user.header(ALICE));

      expect(response.status).toBe(202);
      expect(response.body).toEqual({ id: expect.any(String) });
      expect(permissions.authorize).toHaveBeenCalledWith(
        [{ permission: pvcPrunerPrunePermission, resourceRef: ORDERS }],
        expect.anything(),
      );
      expect(start).toHaveBeenCalledTimes(1);
      const [{ request: req, target, credentials }] = start.mock.calls[0];
      const requestedBy = credentials.principal.userEntityRef;
      expect(req).toEqual({
        ...validPrune({ dryRun: true }),
        entityRef: ORDERS,
      });
      expect(target).toMatchObject({
        entityRef: ORDERS,
        labelSelector: 'backstage.io/kubernetes-id=orders',
      });
      expect(requestedBy).toBe(ALICE);
      expect(await store.getJob(response.body.id)).toMatchObject({
        requestedBy: ALICE,
        dryRun: true,
      });
    });

    it('hands the job the user tokens of the Backstage-Kubernetes-Authorization-* headers, and keeps them out of the store and the audit log', async () => {
      const response = await request(app)
        .post('/v1/prune-jobs')
        .set('authorization', mockCredentials.user.header(ALICE))
        .set('Backstage-Kubernetes-Authorization-aks', 'aks-user-token')
        .send(validPrune({ dryRun: true }));

      expect(response.status).toBe(202);
      expect(start.mock.calls[0][0].requestAuth).toEqual({
        aks: 'aks-user-token',
      });
      expect(
        JSON.stringify(await store.getJob(response.body.id)),
      ).not.toContain('aks-user-token');
      expect(
        JSON.stringify(
          audit.events.map(e => [e.options.meta, e.meta, e.error?.message]),
        ),
      ).not.toContain('aks-user-token');
    });

    it('refuses service credentials with 403: a prune is always some user’s', async () => {
      const response = await postPrune(validPrune()).set(
        'authorization',
        mockCredentials.service.header(),
      );

      expect(response.status).toBe(403);
      expect(response.body.error.message).toMatch(
        /does not allow 'service' credentials/,
      );
      expect(start).not.toHaveBeenCalled();
    });

    it('answers 403 when pvc-pruner.prune is denied, and audits the failure', async () => {
      permissions.authorize.mockImplementation(async requests =>
        requests.map(r => ({
          result:
            r.permission.name === 'pvc-pruner.prune'
              ? AuthorizeResult.DENY
              : AuthorizeResult.ALLOW,
        })),
      );

      const response = await postPrune(validPrune());

      expect(response.status).toBe(403);
      expect(response.body.error.message).toBe(
        `You are not allowed to prune the claims of ${ORDERS} (pvc-pruner.prune)`,
      );
      expect(start).not.toHaveBeenCalled();
      expect(audit.events).toHaveLength(1);
      expectPruneAuditedAsRefused();
      await expectOrphansStillReadable();
    });

    it('audits a prune with severity high, who asked and for what, then its outcome when the job ends', async () => {
      const response = await postPrune(validPrune()).set(
        'authorization',
        mockCredentials.user.header(ALICE),
      );
      expect(response.status).toBe(202);

      expect(audit.events).toHaveLength(1);
      const [event] = audit.events;
      expect(event.options).toMatchObject({
        eventId: 'prune',
        severityLevel: 'high',
        meta: {
          actor: ALICE,
          entityRef: ORDERS,
          cluster: 'demo',
          namespace: 'shop',
          statefulSet: 'orders-db',
          pvcs: ['data-orders-db-2', 'data-orders-db-3'],
          dryRun: false,
        },
      });
      // Accepted is not done: the outcome is recorded when the job reports it.
      expect(event.outcome).toBeUndefined();
      const { reporter } = start.mock.calls[0][0];
      const job = (await store.getJob(response.body.id))!;
      const ok = (n: string) => ({ name: n, uid: n });
      reporter.finished(job, {
        status: 'succeeded',
        summary: {
          deleted: [ok('data-orders-db-2')],
          terminating: [],
          skipped: [ok('data-orders-db-3')],
          failed: [],
          bytesReclaimed: 0,
        },
      } as PruneResult);
      await new Promise(r => setImmediate(r));
      expect(event).toMatchObject({
        outcome: 'success',
        meta: {
          jobId: job.id,
          outcome: 'succeeded',
          deleted: ['data-orders-db-2'],
          terminating: [],
          skipped: ['data-orders-db-3'],
        },
      });
    });

    it('audits an incomplete job as carried out, naming the claims still terminating', async () => {
      await postPrune(validPrune()).expect(202);
      const { reporter } = start.mock.calls[0][0];
      const job = (await store.listJobs()).items[0];
      const ok = (n: string) => ({ name: n, uid: n });
      reporter.finished(job, {
        status: 'incomplete',
        reason:
          'Not everything was reclaimed: data-orders-db-2 is still terminating, held by acc.example/backup-hold',
        summary: {
          deleted: [ok('data-orders-db-3')],
          terminating: [
            {
              ...ok('data-orders-db-2'),
              finalizers: ['acc.example/backup-hold'],
            },
          ],
          skipped: [],
          failed: [],
          bytesReclaimed: 0,
        },
      });
      await new Promise(r => setImmediate(r));
      expect(audit.events[0]).toMatchObject({
        outcome: 'success',
        meta: {
          jobId: job.id,
          outcome: 'incomplete',
          deleted: ['data-orders-db-3'],
          terminating: ['data-orders-db-2'],
        },
      });
    });

    it('audits a prune that asks for snapshots as such, and names each snapshot it took, by claim, deleted or not', async () => {
      await postPrune(validPrune({ snapshot: true })).expect(202);
      const { reporter } = start.mock.calls[0][0];
      const job = (await store.listJobs()).items[0];
      const snapshot = (name: string) => ({
        name,
        expiresAt: '2026-12-09T00:00:00.000Z',
      });
      reporter.finished(job, {
        status: 'incomplete',
        reason: 'Not everything was reclaimed: …',
        summary: {
          deleted: [
            {
              name: 'data-orders-db-2',
              uid: 'u2',
              snapshot: {
                ...snapshot('data-orders-db-2-abc'),
                restoreBytes: 1,
              },
            },
          ],
          terminating: [],
          skipped: [
            {
              name: 'data-orders-db-3',
              uid: 'u3',
              reason: 'it is no longer an orphan: …',
              snapshot: snapshot('data-orders-db-3-abc'),
            },
          ],
          failed: [],
          bytesReclaimed: 0,
        },
      });
      await new Promise(r => setImmediate(r));
      expect(audit.events[0]).toMatchObject({
        options: { meta: { snapshot: true } },
        outcome: 'success',
        meta: {
          snapshots: [
            { claim: 'data-orders-db-2', snapshot: 'data-orders-db-2-abc' },
            { claim: 'data-orders-db-3', snapshot: 'data-orders-db-3-abc' },
          ],
        },
      });
    });

    it('audits a job that ends aborted or failed as a failure, with the reason', async () => {
      await postPrune(validPrune()).expect(202);
      const { reporter } = start.mock.calls[0][0];
      const job = (await store.listJobs()).items[0];
      reporter.finished(job, {
        status: 'aborted',
        reason: 'StatefulSet shop/orders-db changed',
        summary: emptyPruneSummary(),
      });
      await new Promise(r => setImmediate(r));

      expect(audit.events[0]).toMatchObject({
        outcome: 'fail',
        meta: { jobId: job.id, outcome: 'aborted' },
      });
      expect(audit.events[0].error!.message).toBe(
        'prune aborted: StatefulSet shop/orders-db changed',
      );
    });

    it('refuses every prune with 403 and the reason when pruning is disabled', async () => {
      app = await makeApp({
        pruneDisabledReason:
          'Pruning is disabled: the permission framework is off',
      });

      const response = await postPrune(validPrune());

      expect(response.status).toBe(403);
      expect(response.body.error.message).toBe(
        'Pruning is disabled: the permission framework is off',
      );
      expect(start).not.toHaveBeenCalled();
      expect(permissions.authorize).not.toHaveBeenCalled();
      expectPruneAuditedAsRefused();
      await expectOrphansStillReadable();
    });

    const many = Array.from({ length: 1001 }, (_, i) => ({
      name: `data-orders-db-${i}`,
      uid: `u${i}`,
    }));
    it.each<[string, unknown, RegExp]>([
      [
        'an empty list of claims',
        validPrune({ pvcs: [] }),
        /^Invalid prune request: pvcs: must NOT have fewer than 1 items$/,
      ],
      [
        'too many claims',
        validPrune({ pvcs: many }),
        /^Invalid prune request: pvcs: must NOT have more than 1000 items$/,
      ],
      [
        'a missing field',
        { ...validPrune(), statefulSet: undefined },
        /^Invalid prune request: statefulSet: Required$/,
      ],
      [
        'dryRun as a string',
        validPrune({ dryRun: 'yes' }),
        /^Invalid prune request: dryRun: must be boolean$/,
      ],
      [
        'pvcs as an object',
        validPrune({ pvcs: { name: 'x' } }),
        /^Invalid prune request: pvcs: must be array$/,
      ],
      [
        'a claim without uid',
        validPrune({ pvcs: [{ name: 'data-orders-db-2' }] }),
        /^Invalid prune request: pvcs\.0\.uid: Required$/,
      ],
      [
        'a claim with a number uid',
        validPrune({ pvcs: [{ name: 'data-orders-db-2', uid: 7 }] }),
        /^Invalid prune request: pvcs\.0\.uid: must be string$/,
      ],
      [
        'a claim with an extra field',
        validPrune({
          pvcs: [{ name: 'data-orders-db-2', uid: 'u', force: true }],
        }),
        /pvcs\.0: Unrecognized key\(s\) in object: 'force'/,
      ],
      [
        'an unknown top-level field',
        validPrune({ gracePeriodSeconds: 0 }),
        /^Invalid prune request: prune request: Unrecognized key\(s\) in object: 'gracePeriodSeconds'$/,
      ],
      [
        'an upper-case claim name',
        validPrune({ pvcs: [{ name: 'Data-2', uid: 'u' }] }),
        /pvcs\.0\.name: must be a lowercase RFC 1123 name/,
      ],
      [
        'a path in the namespace',
        validPrune({ namespace: '../kube-system' }),
        /namespace: must be a lowercase RFC 1123 name/,
      ],
      [
        'a too long namespace',
        validPrune({ namespace: 'n'.repeat(64) }),
        /^Invalid prune request: namespace: must NOT have more than 63 characters$/,
      ],
      [
        'an array body',
        [validPrune()],
        /^Invalid prune request: prune request: must be object$/,
      ],
      [
        'a malformed entityRef',
        validPrune({ entityRef: 'component:default/' }),
        /^Malformed entityRef "component:default\/": /,
      ],
      [
        'an entityRef without kind',
        validPrune({ entityRef: 'orders' }),
        /^Malformed entityRef "orders": .*missing or empty kind/,
      ],
    ])(
      'answers 400 for %s, and starts nothing',
      async (_what, body, message) => {
        const response = await postPrune(body);

        expectInputError(response, message);
        expect(start).not.toHaveBeenCalled();
      },
    );

    it('answers 400 for a body that is not JSON', async () => {
      const response = await request(app)
        .post('/v1/prune-jobs')
        .set('content-type', 'application/json')
        .send('{"entityRef":');

      expect(response.status).toBe(400);
      expect(start).not.toHaveBeenCalled();
    });

    it('answers 413 for a body over 64 kB, before reading it', async () => {
      const body = validPrune({
        pvcs: Array.from({ length: 1000 }, (_, i) => ({
          name: `data-orders-db-${i}`,
          uid: 'x'.repeat(64),
        })),
      });
      expect(JSON.stringify(body).length).toBeGreaterThan(64 * 1024);

      const response = await postPrune(body);

      expect(response.status).toBe(413);
      expect(response.body.error.message).toMatch(/request entity too large/i);
      expect(start).not.toHaveBeenCalled();
      expect(audit.events).toEqual([]);
    });

    it('answers 404 for an unknown entity, and 400 naming the annotations for one without them', async () => {
      const unknown = await postPrune(
        validPrune({ entityRef: 'component:default/nope' }),
      );
      const bare = await postPrune(
        validPrune({ entityRef: 'component:default/bare' }),
      );

      expect(unknown.status).toBe(404);
      expect(unknown.body.error.message).toBe(
        'Entity component:default/nope was not found in the catalog',
      );
      expect(bare.status).toBe(400);
      expect(bare.body.error.message).toMatch(
        /backstage\.io\/kubernetes-id.*backstage\.io\/kubernetes-label-selector/,
      );
      expect(start).not.toHaveBeenCalled();
    });
  });

  describe('POST /v1/snapshots/keep', () => {
    const KEEP = {
      snapshot: {
        entityRef: ORDERS,
        cluster: 'demo',
        namespace: 'shop',
        statefulSet: 'orders-db',
        snapshot: {
          name: 'data-orders-db-3-6f1c2a3b',
          uid: '0a9b8c7d-1111-4222-8333-944455556666',
        },
      },
      keepUntil: '2027-01-15T00:00:00.000Z',
    };
    const KEPT: KeptSnapshot = {
      name: 'data-orders-db-3-6f1c2a3b',
      namespace: 'shop',
      uid: '0a9b8c7d-1111-4222-8333-944455556666',
      claimName: 'data-orders-db-3',
      createdAt: '2026-12-01T10:00:00.000Z',
      readyToUse: true,
      expiresAt: '2027-01-15T00:00:00.000Z',
      keepUntil: '2027-01-15T00:00:00.000Z',
      restorable: true,
    };
    const postKeep = (body: unknown = KEEP) =>
      request(app)
        .post('/v1/snapshots/keep')
        .send(body as object);

    beforeEach(() => {
      keepSnapshot.mockReset();
      keepSnapshot.mockResolvedValue(KEPT);
    });

    it('hands the request to the keeper with the entity it was permitted on, answers what it kept, and audits it (medium)', async () => {
      const response = await postKeep().set(
        'authorization',
        mockCredentials.user.header(ALICE),
      );
      expect(response.status).toBe(200);
      expect(response.body).toEqual(KEPT);
      expect(keepSnapshot).toHaveBeenCalledTimes(1);
      const [{ request: body, target }] = keepSnapshot.mock.calls[0];
      expect(body).toEqual(KEEP);
      expect(target.entityRef).toBe(ORDERS);
      expect(permissions.authorize).toHaveBeenCalledWith(
        [
          expect.objectContaining({
            permission: pvcPrunerPrunePermission,
            resourceRef: ORDERS,
          }),
        ],
        expect.anything(),
      );
      expect(audit.events).toHaveLength(1);
      expect(audit.events[0]).toMatchObject({
        options: {
          eventId: 'snapshot-keep',
          severityLevel: 'medium',
          meta: {
            actor: ALICE,
            entityRef: ORDERS,
            snapshot: KEEP.snapshot.snapshot.name,
            uid: KEEP.snapshot.snapshot.uid,
            keepUntil: KEEP.keepUntil,
          },
        },
        outcome: 'success',
      });
    });

    it('refuses service credentials with 403, before any audit: keeping is some user’s act', async () => {
      const response = await postKeep().set(
        'authorization',
        mockCredentials.service.header(),
      );
      expect(response.status).toBe(403);
      expect(keepSnapshot).not.toHaveBeenCalled();
    });

    it('answers 403 when pvc-pruner.prune is denied on the entity, and audits the failure', async () => {
      permissions.authorize.mockImplementation(async requests =>
        requests.map(r => ({
          result:
            r.permission.name === 'pvc-pruner.prune'
              ? AuthorizeResult.DENY
              : AuthorizeResult.ALLOW,
        })),
      );
      const response = await postKeep();
      expect(response.status).toBe(403);
      expect(keepSnapshot).not.toHaveBeenCalled();
      expect(audit.events).toHaveLength(1);
      expect(audit.events[0]).toMatchObject({
        options: { eventId: 'snapshot-keep' },
        outcome: 'fail',
      });
    });

    it('answers 403 with the reason when pruning is disabled', async () => {
      app = await makeApp({
        pruneDisabledReason:
          'Pruning is disabled: the permission framework is off',
      });
      const response = await postKeep();
      expect(response.status).toBe(403);
      expect(response.body.error.message).toBe(
        'Pruning is disabled: the permission framework is off',
      );
      expect(keepSnapshot).not.toHaveBeenCalled();
      expect(audit.events[0].outcome).toBe('fail');
    });

    it('answers 400 for a malformed entity ref, audited as refused', async () => {
      const response = await postKeep({
        ...KEEP,
        snapshot: { ...KEEP.snapshot, entityRef: 'component:' },
      });
      expect(response.status).toBe(400);
      expect(keepSnapshot).not.toHaveBeenCalled();
      expect(audit.events[0].outcome).toBe('fail');
    });

    it('answers 400 for a body the spec refuses (no keepUntil), before the keeper is asked', async () => {
      const { keepUntil: _k, ...noDate } = KEEP;
      const response = await postKeep(noDate);
      expect(response.status).toBe(400);
      expect(keepSnapshot).not.toHaveBeenCalled();
    });
  });

  describe('GET /v1/snapshots', () => {
    it('checks pvc-pruner.orphans.read on the entity, lists its snapshots with the user tokens, and audits the read', async () => {
      const response = await request(app)
        .get('/v1/snapshots')
        .query({ entityRef: ORDERS })
        .set('Backstage-Kubernetes-Authorization-oidc-okta', 'user-token');

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        entityRef: ORDERS,
        clusters: [{ cluster: 'demo', ok: true, statefulSets: [] }],
        totals: { snapshots: 0, bytes: 0 },
      });
      expect(permissions.authorize).toHaveBeenCalledWith(
        [
          expect.objectContaining({
            permission: pvcPrunerOrphansReadPermission,
            resourceRef: ORDERS,
          }),
        ],
        expect.anything(),
      );
      expect(listSnapshots).toHaveBeenCalledWith(
        expect.objectContaining({ entityRef: ORDERS }),
        expect.anything(),
        { oidc: { okta: 'user-token' } },
      );
      expect(audit.events).toEqual([
        expect.objectContaining({
          options: expect.objectContaining({
            eventId: 'snapshots-read',
            severityLevel: 'low',
          }),
          outcome: 'success',
          meta: { snapshots: 0 },
        }),
      ]);
    });

    it('answers 403 without listing when reads are denied, and 401 without credentials', async () => {
      denyEverything();
      const denied = await request(app)
        .get('/v1/snapshots')
        .query({ entityRef: ORDERS });
      const anonymous = await request(app)
        .get('/v1/snapshots')
        .query({ entityRef: ORDERS })
        .set('authorization', mockCredentials.none.header());

      expect(denied.status).toBe(403);
      expect(anonymous.status).toBe(401);
      expect(listSnapshots).not.toHaveBeenCalled();
    });
  });

  describe('POST /v1/restores', () => {
    const validRestore = (overrides: Record<string, unknown> = {}) => ({
      entityRef: ORDERS,
      cluster: 'demo',
      namespace: 'shop',
      statefulSet: 'orders-db',
      snapshot: { name: SNAPSHOT_NAME, uid: SNAPSHOT_UID },
      ...overrides,
    });
    const postRestore = (body: unknown) =>
      request(app)
        .post('/v1/restores')
        .set('authorization', mockCredentials.user.header(ALICE))
        .send(body as object);

    /** The restore was audited with severity high, and as refused. */
    function expectRestoreAuditedAsRefused() {
      expect(audit.events).toEqual([
        expect.objectContaining({
          options: expect.objectContaining({
            eventId: 'restore',
            severityLevel: 'high',
          }),
          outcome: 'fail',
        }),
      ]);
    }

    it('creates the claim for a user allowed pvc-pruner.prune, answers 201, audits it, and records it in the job that took the snapshot', async () => {
      const job = await store.createJob({
        id: JOB_ID,
        entityRef: ORDERS,
        cluster: 'demo',
        namespace: 'shop',
        statefulSet: 'orders-db',
        dryRun: false,
        requestedBy: ALICE,
        pvcs: [{ name: 'data-orders-db-3', uid: 'claim-uid-3' }],
      } as Parameters<PruneJobStore['createJob']>[0]);

      const response = await postRestore(validRestore());

      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        claim: {
          name: 'data-orders-db-3',
          namespace: 'shop',
          uid: 'restored-claim-uid',
        },
        snapshot: SNAPSHOT_NAME,
        statefulSet: 'orders-db',
        requested: '20Gi',
        reattachesAtReplicas: 4,
        message: 'scale orders-db to 4 replicas to bring it back',
      });
      expect(restoreCluster.created.map(c => c.metadata?.name)).toEqual([
        'data-orders-db-3',
      ]);
      expect(audit.events).toEqual([
        expect.objectContaining({
          options: expect.objectContaining({
            eventId: 'restore',
            severityLevel: 'high',
            meta: expect.objectContaining({
              actor: ALICE,
              snapshot: SNAPSHOT_NAME,
              snapshotUid: SNAPSHOT_UID,
            }),
          }),
          outcome: 'success',
          meta: expect.objectContaining({
            claim: 'data-orders-db-3',
            jobId: job.id,
          }),
        }),
      ]);
      const logged = await store.listEvents(job.id, 0);
      expect(logged.map(e => e.type)).toContain('snapshot-restored');
    });

    it('refuses service credentials with 403, and answers 401 without credentials', async () => {
      const asService = await request(app)
        .post('/v1/restores')
        .set('authorization', mockCredentials.service.header())
        .send(validRestore());
      const anonymous = await request(app)
        .post('/v1/restores')
        .set('authorization', mockCredentials.none.header())
        .send(validRestore());

      expect(asService.status).toBe(403);
      expect(anonymous.status).toBe(401);
      expect(restoreCluster.calls).toEqual([]);
    });

    it('answers 403 when pvc-pruner.prune is denied, before asking the cluster, and audits the refusal', async () => {
      permissions.authorize.mockImplementation(async requests =>
        requests.map(r => ({
          result:
            r.permission.name === 'pvc-pruner.prune'
              ? AuthorizeResult.DENY
              : AuthorizeResult.ALLOW,
        })),
      );

      const response = await postRestore(validRestore());

      expect(response.status).toBe(403);
      expect(restoreCluster.calls).toEqual([]);
      expectRestoreAuditedAsRefused();
    });

    it('answers 403 with the reason when pruning is disabled', async () => {
      app = await makeApp({ pruneDisabledReason: 'Pruning is disabled' });

      const response = await postRestore(validRestore());

      expect(response.status).toBe(403);
      expect(response.body.error.message).toBe('Pruning is disabled');
      expect(restoreCluster.calls).toEqual([]);
      expectRestoreAuditedAsRefused();
    });

    it('answers 404 for a snapshot pvc-pruner did not take of this StatefulSet', async () => {
      restoreCluster.addSnapshot(
        prunersSnapshot({}, { 'pvc-pruner.backstage.io/statefulset': 'other' }),
      );

      const response = await postRestore(validRestore());

      expect(response.status).toBe(404);
      expect(restoreCluster.created).toEqual([]);
      expectRestoreAuditedAsRefused();
    });

    it.each<[string, () => void, Record<string, unknown>, RegExp]>([
      [
        'a claim of that name exists',
        () =>
          restoreCluster.claims.set('shop/data-orders-db-3', {
            metadata: { name: 'data-orders-db-3' },
          }),
        {},
        /A claim named data-orders-db-3 exists/,
      ],
      [
        'the snapshot is another one (uid)',
        () => undefined,
        { snapshot: { name: SNAPSHOT_NAME, uid: 'seen-before' } },
        /is another one now/,
      ],
      [
        'the snapshot is not ready',
        () => {
          const s = prunersSnapshot();
          s.status!.readyToUse = false;
          restoreCluster.addSnapshot(s);
        },
        {},
        /not ready/,
      ],
      [
        'its claim-name annotation names a claim that is not the StatefulSet’s',
        () => {
          const s = prunersSnapshot({
            'pvc-pruner.backstage.io/claim-name': 'postgres-admin',
          });
          s.spec!.source!.persistentVolumeClaimName = 'postgres-admin';
          restoreCluster.addSnapshot(s);
        },
        {},
        /"postgres-admin" is not a claim of StatefulSet orders-db/,
      ],
      [
        'its claim labels are not labels',
        () =>
          restoreCluster.addSnapshot(
            prunersSnapshot({
              'pvc-pruner.backstage.io/claim-labels': JSON.stringify({
                app: 'x'.repeat(64),
              }),
            }),
          ),
        {},
        /is not a label value/,
      ],
    ])(
      'answers 409 when %s, creating nothing',
      async (_what, arrange, body, message) => {
        arrange();

        const response = await postRestore(validRestore(body));

        expect(response.status).toBe(409);
        expect(response.body.error.message).toMatch(message);
        expect(restoreCluster.created).toEqual([]);
        expectRestoreAuditedAsRefused();
      },
    );

    it.each<[string, Record<string, unknown>]>([
      ['a malformed entityRef', { entityRef: 'component:' }],
      ['a snapshot without a uid', { snapshot: { name: SNAPSHOT_NAME } }],
      ['an unknown field', { force: true }],
      ['a namespace that is no name', { namespace: 'Shop!' }],
    ])('answers 400 for %s, asking no cluster', async (_what, body) => {
      const response = await postRestore(validRestore(body));

      expect(response.status).toBe(400);
      expect(restoreCluster.calls).toEqual([]);
    });
  });

  describe('GET /v1/prune-jobs', () => {
    it('lists the jobs of an entity the caller may read', async () => {
      const job = await storedJob();
      await storedJob('component:default/pinned');

      const response = await request(app)
        .get('/v1/prune-jobs')
        .query({ entityRef: ORDERS, limit: 5 });

      expect(response.status).toBe(200);
      expect(response.body.items.map((j: PruneJob) => j.id)).toEqual([job.id]);
      expect(permissions.authorize).toHaveBeenCalledWith(
        [{ permission: pvcPrunerOrphansReadPermission, resourceRef: ORDERS }],
        expect.anything(),
      );
    });

    it.each([
      [{ entityRef: ORDERS, limit: 0 }, /^Invalid query: limit: must be >= 1$/],
      [
        { entityRef: ORDERS, limit: 'ten' },
        /^Invalid query: limit: must be integer$/,
      ],
      [{ entityRef: ORDERS, cursor: 'not a cursor!' }, /Invalid cursor/],
      [{ limit: 5 }, /entityRef: Required/],
    ])('answers 400 for %j', async (query, message) => {
      const response = await request(app).get('/v1/prune-jobs').query(query);

      expect(response.status).toBe(400);
      expect(response.body.error.message).toMatch(message);
    });

    it('answers 403 when reads are denied', async () => {
      await storedJob();
      denyEverything();

      expect(
        (await request(app).get('/v1/prune-jobs').query({ entityRef: ORDERS }))
          .status,
      ).toBe(403);
    });
  });

  describe('a StatefulSet no catalog entity claims', () => {
    /** Allows everything but one permission. */
    function denying(name: string) {
      permissions.authorize.mockImplementation(async requests =>
        requests.map(r => ({
          result:
            r.permission.name === name
              ? AuthorizeResult.DENY
              : AuthorizeResult.ALLOW,
        })),
      );
    }
    const unownedPrune = () => validPrune({ entityRef: undefined });

    it('is pruned without an entity only with pvc-pruner.unowned.prune, asked before any cluster', async () => {
      denying('pvc-pruner.unowned.prune');
      const refused = await postPrune(unownedPrune()).set(
        'authorization',
        mockCredentials.user.header(ALICE),
      );
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toBe(
        'Pruning a StatefulSet that no catalog entity claims needs pvc-pruner.unowned.prune',
      );
      expect(start).not.toHaveBeenCalled();
      expectPruneAuditedAsRefused();

      permissions.authorize.mockImplementation(async requests =>
        requests.map(() => ({ result: AuthorizeResult.ALLOW })),
      );
      const accepted = await postPrune(unownedPrune()).set(
        'authorization',
        mockCredentials.user.header(ALICE),
      );
      expect(accepted.status).toBe(202);
      expect(start.mock.calls[0][0].target).toBeUndefined();
      const job = await request(app)
        .get(`/v1/prune-jobs/${accepted.body.id}`)
        .set('authorization', mockCredentials.user.header(ALICE));
      expect(job.body.entityRef).toBeUndefined();
    });

    it('has its jobs read only with pvc-pruner.fleet.unowned.read', async () => {
      const job = await store.createJob({
        cluster: 'demo',
        namespace: 'tools',
        statefulSet: 'stray',
        dryRun: true,
        requestedBy: ALICE,
        pvcs: validPrune().pvcs,
      });
      denying('pvc-pruner.fleet.unowned.read');

      const response = await request(app).get(`/v1/prune-jobs/${job.id}`);

      expect(response.status).toBe(403);
      expect(response.body.error.message).toBe(
        'Reading the prune of a StatefulSet that no catalog entity claims needs pvc-pruner.fleet.unowned.read',
      );
    });

    it('has its orphans read only with pvc-pruner.fleet.unowned.read, and parameters checked', async () => {
      denying('pvc-pruner.fleet.unowned.read');
      const query = {
        cluster: 'demo',
        namespace: 'tools',
        statefulSet: 'stray',
      };

      const refused = await request(app)
        .get('/v1/unowned/orphans')
        .query(query);
      expect(refused.status).toBe(403);

      expectInputError(
        await request(app)
          .get('/v1/unowned/orphans')
          .query({ ...query, statefulSet: 'Not_A_Name' }),
        /statefulSet/,
      );
      expectInputError(
        await request(app)
          .get('/v1/unowned/orphans')
          .query({ ...query, name: 'stray' }),
        /name/,
      );
    });
  });

  describe('a prune of a StatefulSet another entity co-claims', () => {
    /** The entity the job went through: one that co-claims orders' StatefulSet (and, for an automatic prune, opted in). */
    const MALLORY = 'component:default/pinned';
    const pruneJob = (
      claimants: string[],
      automatic = true,
    ): Promise<PruneJob> =>
      store.createJob({
        entityRef: MALLORY,
        cluster: 'demo',
        namespace: 'shop',
        statefulSet: 'orders-db',
        dryRun: false,
        requestedBy: automatic ? 'plugin:pvc-pruner' : ALICE,
        pvcs: validPrune().pvcs,
        ...(automatic
          ? { automatic: { onBehalfOf: MALLORY, runId: 'run-1', grace: '1d' } }
          : {}),
        claimants,
      });
    /** Allows pvc-pruner.orphans.read on `refs` only, and no basic permission. */
    function readableOnly(...refs: string[]) {
      permissions.authorize.mockImplementation(async requests =>
        requests.map(r => ({
          result:
            'resourceRef' in r && refs.includes(r.resourceRef as string)
              ? AuthorizeResult.ALLOW
              : AuthorizeResult.DENY,
        })),
      );
    }
    const list = () =>
      request(app).get('/v1/prune-jobs').query({ entityRef: MALLORY });

    it.each([
      ['an automatic prune', true],
      ["a person's prune", false],
    ])(
      '%s is read only by who may read every entity that claimed its StatefulSet, not only the one it went through',
      async (_, automatic) => {
        const job = await pruneJob([MALLORY, ORDERS], automatic);
        readableOnly(MALLORY);

        expect((await list()).body.items).toEqual([]);
        const refused = await request(app).get(`/v1/prune-jobs/${job.id}`);
        expect(refused.status).toBe(403);
        expect(refused.body.error.message).toBe(
          'Reading a prune needs pvc-pruner.orphans.read on every entity that claimed its StatefulSet when it ran, not only on the entity it went through',
        );
        expect(
          (await request(app).get(`/v1/prune-jobs/${job.id}/events`)).status,
        ).toBe(403);

        readableOnly(MALLORY, ORDERS);
        expect((await list()).body.items.map((j: PruneJob) => j.id)).toEqual([
          job.id,
        ]);
        const read = await request(app).get(`/v1/prune-jobs/${job.id}`);
        expect(read.status).toBe(200);
        expect(read.body.claimants).toEqual([ORDERS, MALLORY]);
        // It is in the history of the other claimant too.
        expect(
          (
            await request(app)
              .get('/v1/prune-jobs')
              .query({ entityRef: ORDERS })
          ).body.items.map((j: PruneJob) => j.id),
        ).toEqual([job.id]);
      },
    );

    it('an automatic prune whose claimants are unknown is read only with pvc-pruner.fleet.unowned.read', async () => {
      const job = await pruneJob([]);
      readableOnly(MALLORY, ORDERS);

      expect((await list()).body.items).toEqual([]);
      expect((await request(app).get(`/v1/prune-jobs/${job.id}`)).status).toBe(
        403,
      );
    });
  });

  describe('GET /v1/prune-jobs/:id', () => {
    it('returns a job after checking read permission on its entity', async () => {
      const job = await storedJob();

      const response = await request(app)
        .get(`/v1/prune-jobs/${job.id}`)
        .set('authorization', mockCredentials.service.header());

      expect(response.status).toBe(200);
      expect(response.body).toEqual(job);
      expect(permissions.authorize).toHaveBeenCalledWith(
        [{ permission: pvcPrunerOrphansReadPermission, resourceRef: ORDERS }],
        expect.anything(),
      );
    });

    it.each([
      '0b5e6a4c-6f5e-4a8e-9d55-8d3f0c0e9a11',
      'not-a-uuid',
      "x' OR '1'='1",
    ])('answers 404 for the unknown job id %j', async id => {
      await storedJob();

      const response = await request(app).get(
        `/v1/prune-jobs/${encodeURIComponent(id)}`,
      );

      expect(response.status).toBe(404);
      expect(response.body.error.message).toBe(`No prune job with id "${id}"`);
    });

    it('answers 403 for a job of an entity the caller may not read, and 401 without credentials', async () => {
      const job = await storedJob();
      denyEverything();

      expect((await request(app).get(`/v1/prune-jobs/${job.id}`)).status).toBe(
        403,
      );
      expect(
        (
          await request(app)
            .get(`/v1/prune-jobs/${job.id}`)
            .set('authorization', mockCredentials.none.header())
        ).status,
      ).toBe(401);
    });
  });

  describe('GET /v1/prune-jobs/:id/events', () => {
    function parseFrames(text: string) {
      return text
        .split('\n\n')
        .filter(f => f.includes('data: '))
        .map(f => {
          const fields = Object.fromEntries(
            f
              .split('\n')
              .filter(l => !l.startsWith(':'))
              .map(l => [
                l.slice(0, l.indexOf(':')),
                l.slice(l.indexOf(':') + 2),
              ]),
          );
          return {
            id: fields.id,
            event: fields.event,
            data: JSON.parse(fields.data),
          };
        });
    }

    const getEvents = (id: string) =>
      request(app).get(`/v1/prune-jobs/${id}/events`);

    /** A stored job whose log is complete, up to job-finished. */
    async function finishedJob() {
      const job = await storedJob();
      await finishJob(job.id);
      return job;
    }

    /** The seq of each event the response streamed. */
    async function streamedSeqs(response: Promise<request.Response>) {
      return parseFrames((await response).text).map(f => f.data.seq);
    }

    it('replays a finished job as text/event-stream frames, in seq order, and ends', async () => {
      const job = await finishedJob();

      const response = await getEvents(job.id);

      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(response.headers['cache-control']).toContain('no-cache');
      const frames = parseFrames(response.text);
      expect(frames.map(f => f.data.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(frames.map(f => f.event)).toEqual([
        'job-queued',
        'job-started',
        'pvc-deleting',
        'pvc-deleted',
        'job-finished',
      ]);
      expect(frames.map(f => f.id)).toEqual(['1', '2', '3', '4', '5']);
    });

    it('replays what became of a finished job’s snapshots after job-finished, and nothing else logged after it', async () => {
      const job = await finishedJob();
      await events.append({
        jobId: job.id,
        type: 'pvc-deleted',
        pvc: 'data-orders-db-3',
        message: 'a late runner event',
      });
      await events.append({
        jobId: job.id,
        type: 'snapshot-kept',
        pvc: 'data-orders-db-2',
        message: 'kept until 2027-01-15',
      });
      await events.append({
        jobId: job.id,
        type: 'snapshot-expired',
        pvc: 'data-orders-db-2',
        message: 'expired',
      });

      const frames = parseFrames((await getEvents(job.id)).text);
      expect(frames.map(f => f.event)).toEqual([
        'job-queued',
        'job-started',
        'pvc-deleting',
        'pvc-deleted',
        'job-finished',
        'snapshot-kept',
        'snapshot-expired',
      ]);
      // Resuming after job-finished gives just those.
      expect(
        await streamedSeqs(
          request(app).get(`/v1/prune-jobs/${job.id}/events?after=5`),
        ),
      ).toEqual([7, 8]);
    });

    it('replays only the events after ?after=', async () => {
      const job = await finishedJob();

      expect(await streamedSeqs(getEvents(job.id).query({ after: 3 }))).toEqual(
        [4, 5],
      );
    });

    it('resumes after the Last-Event-ID a reconnecting EventSource sends, which wins over ?after=', async () => {
      const job = await finishedJob();

      expect(
        await streamedSeqs(
          getEvents(job.id).query({ after: 0 }).set('Last-Event-ID', '4'),
        ),
      ).toEqual([5]);
    });

    it.each(['soon', '1e3', '0x10', '-1', '1.5'])(
      'answers 400 for a Last-Event-ID of %j',
      async lastEventId => {
        const job = await storedJob();

        const response = await getEvents(job.id).set(
          'Last-Event-ID',
          lastEventId,
        );

        expect(response.status).toBe(400);
        expect(response.body.error.message).toBe(
          'Invalid header: Last-Event-ID: must be the seq of an event',
        );
      },
    );

    it('ends at once when ?after= is at or past the end of a finished job’s log', async () => {
      const job = await finishedJob();

      for (const after of [5, 99]) {
        const response = await getEvents(job.id).query({ after }).timeout(3000);
        expect(response.status).toBe(200);
        expect(parseFrames(response.text)).toEqual([]);
      }
    });

    it('ends a log at its job-finished event, even when a late event follows it', async () => {
      const job = await finishedJob();
      // Written by a run that had not yet learnt another replica ended its job.
      await events.append({
        jobId: job.id,
        type: 'pvc-deleted',
        pvc: 'data-orders-db-3',
        message: 'deleted late',
      });

      expect(await streamedSeqs(getEvents(job.id).timeout(3000))).toEqual([
        1, 2, 3, 4, 5,
      ]);
      const resumed = await getEvents(job.id).query({ after: 5 }).timeout(3000);
      expect(parseFrames(resumed.text)).toEqual([]);
    });

    it('follows a running job live until job-finished', async () => {
      const job = await storedJob();
      const pending = streamedSeqs(getEvents(job.id).then(r => r));
      await new Promise(r => setTimeout(r, 100));
      await finishJob(job.id);

      expect(await pending).toEqual([1, 2, 3, 4, 5]);
    });

    it.each(['abc', '-1', '1.5', '1e999', 'after=1&after=2'])(
      'answers 400 for ?after=%j before any stream starts',
      async after => {
        const job = await storedJob();

        const response = await request(app).get(
          `/v1/prune-jobs/${job.id}/events?after=${after.replace(
            'after=1&after=',
            '1&after=',
          )}`,
        );

        expect(response.status).toBe(400);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
        expect(response.body.error.message).toMatch(/^Invalid query: after: /);
      },
    );

    it('checks read permission before sending headers: a denial is a JSON 403, not a stream', async () => {
      const job = await storedJob();
      denyEverything();

      const response = await getEvents(job.id);

      expect(response.status).toBe(403);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
    });

    it('answers 404 for an unknown job', async () => {
      expect(
        (
          await request(app).get(
            '/v1/prune-jobs/0b5e6a4c-6f5e-4a8e-9d55-8d3f0c0e9a11/events',
          )
        ).status,
      ).toBe(404);
    });

    describe('open streams per user', () => {
      let server: http.Server;
      let streams: OpenStreamLimits;
      const BOB = 'user:default/bob';

      /** Opens the events of `jobId` as `user` over a real connection; resolves once the status arrives. */
      function openStream(jobId: string, user = ALICE) {
        return new Promise<{
          status: number;
          body: () => Promise<string>;
          close: () => void;
        }>((resolve, reject) => {
          const { port } = server.address() as AddressInfo;
          const req = http.get(
            {
              port,
              path: `/v1/prune-jobs/${jobId}/events`,
              headers: { authorization: mockCredentials.user.header(user) },
            },
            res => {
              let text = '';
              res.on('data', chunk => (text += chunk));
              const ended = new Promise<string>(r =>
                res.on('end', () => r(text)),
              );
              resolve({
                status: res.statusCode!,
                body: () => ended,
                close: () => req.destroy(),
              });
            },
          );
          req.on('error', e => {
            if ((e as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(e);
          });
        });
      }

      beforeEach(async () => {
        streams = new OpenStreamLimits(2);
        server = http.createServer(await makeApp({ eventStreams: streams }));
        await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
      });

      afterEach(async () => {
        server.closeAllConnections();
        await new Promise(r => server.close(r));
      });

      it('refuses one stream too many with a JSON 429, before headers, saying how many are open; other users are not counted', async () => {
        const job = await storedJob();
        const first = await openStream(job.id);
        const second = await openStream(job.id);
        expect([first.status, second.status]).toEqual([200, 200]);

        const third = await openStream(job.id);

        expect(third.status).toBe(429);
        expect(JSON.parse(await third.body()).error).toMatchObject({
          name: 'TooManyRequestsError',
          message:
            'You have 2 event streams of prune jobs open on this Backstage instance (the limit is 2); close a page that follows a prune, or wait for one to finish',
        });
        expect((await openStream(job.id, BOB)).status).toBe(200);
      });

      it('frees a slot when a client disconnects', async () => {
        const job = await storedJob();
        const first = await openStream(job.id);
        await openStream(job.id);
        expect((await openStream(job.id)).status).toBe(429);

        first.close();
        await eventually(
          'the server noticed the closed connection',
          () => streams.openFor(mockCredentials.user(ALICE)) === 1,
        );

        expect((await openStream(job.id)).status).toBe(200);
      });

      it('frees the slot of a client that went away before its stream started', async () => {
        const job = await storedJob();
        let checked!: () => void;
        const checking = new Promise<void>(r => (checked = r));
        permissions.authorize.mockImplementation(async requests => {
          checked();
          // The read check is slow; the client leaves meanwhile.
          await new Promise(r => setTimeout(r, 200));
          return requests.map(() => ({ result: AuthorizeResult.ALLOW }));
        });
        const { port } = server.address() as AddressInfo;
        const req = http.get({
          port,
          path: `/v1/prune-jobs/${job.id}/events`,
          headers: { authorization: mockCredentials.user.header(ALICE) },
        });
        req.on('error', () => {});
        await checking;
        req.destroy();

        await new Promise(r => setTimeout(r, 600));
        expect(streams.openFor(mockCredentials.user(ALICE))).toBe(0);
      });

      it('frees a slot when the stream ends with its job', async () => {
        const job = await storedJob();
        await finishJob(job.id);

        for (let i = 0; i < 3; i++) {
          const replay = await openStream(job.id);
          expect(replay.status).toBe(200);
          expect(await replay.body()).toContain('event: job-finished');
        }
        expect(streams.openFor(mockCredentials.user(ALICE))).toBe(0);
      });
    });
  });
});
