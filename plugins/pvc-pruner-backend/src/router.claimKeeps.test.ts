import {
  mockCredentials,
  mockErrorHandler,
  mockServices,
} from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  AUTO_PRUNE_ANNOTATION,
  KeepClaimRequest,
  OrphansResponse,
  pvcPrunerPrunePermission,
} from 'backstage-plugin-pvc-pruner-common';
import express from 'express';
import request from 'supertest';
import { catalogOf, componentEntity } from './__testUtils__/catalogEntities';
import {
  orphanedClaim,
  statefulSetReport,
} from './__testUtils__/orphanReports';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { memoryDatabase } from './__testUtils__/memoryJobStore';
import {
  AutoPruneAnswer,
  ClaimKeepRequests,
  ClaimKeepStore,
  readAutoPruneOptions,
} from './automation';
import { OpenStreamLimits } from './limits';
import { EntityWorkloads, OrphanFinder } from './orphans';
import { createRouter, RouterOptions } from './router';
import { ConfigReader } from '@backstage/config';

/* The keep routes and the orphan answer's automatic pruning, over the real keep store (SQLite); the finder is a fake that answers one StatefulSet. */

const ORDERS = 'component:default/orders';
const ALICE = 'user:default/alice';
const UID_2 = 'uid-data-orders-db-2';

const orders = componentEntity('orders', {
  annotations: {
    'backstage.io/kubernetes-id': 'orders',
    [AUTO_PRUNE_ANNOTATION]: '7d',
  },
});

const FOUND: OrphansResponse = {
  entityRef: ORDERS,
  clusters: [
    {
      cluster: 'demo',
      ok: true,
      statefulSets: [
        statefulSetReport('shop', 'orders-db', [
          orphanedClaim('orders-db', 2, 10, {
            firstSeenOrphanedAt: '2026-11-20T10:00:00.000Z',
          }),
        ]),
      ],
    },
  ],
  totals: { orphans: 1, reclaimableBytes: 10, retainedBytes: 0 },
};

/** Another team's entity that claims the same StatefulSet (the same kubernetes-id). */
const CLAIMANT = 'component:default/claimant';
const claimant = componentEntity('claimant', {
  annotations: {
    'backstage.io/kubernetes-id': 'orders',
    [AUTO_PRUNE_ANNOTATION]: '7d',
  },
});

const validKeep = (more: Partial<KeepClaimRequest> = {}): KeepClaimRequest => ({
  entityRef: ORDERS,
  cluster: 'demo',
  namespace: 'shop',
  statefulSet: 'orders-db',
  claim: { name: 'data-orders-db-2', uid: UID_2 },
  reason: ' holds the November export ',
  ...more,
});

describe('the claim keep routes', () => {
  let close: () => Promise<void>;
  let keeps: ClaimKeepStore;
  let permissions: ReturnType<typeof mockServices.permissions.mock>;
  let audit: ReturnType<typeof recordingAuditor>;
  let app: express.Express;

  beforeEach(async () => {
    const memory = memoryDatabase();
    close = memory.close;
    keeps = await ClaimKeepStore.create({ database: memory.database });
    permissions = mockServices.permissions.mock();
    permissions.authorize.mockImplementation(async requests =>
      requests.map(() => ({ result: AuthorizeResult.ALLOW })),
    );
    audit = recordingAuditor();
    const orphanFinder = {
      findForEntity: async (_target, _auth, admit) => {
        await admit?.([
          {
            cluster: 'demo',
            statefulSet: {
              metadata: {
                name: 'orders-db',
                namespace: 'shop',
                labels: { 'backstage.io/kubernetes-id': 'orders' },
              },
            },
          },
        ]);
        return FOUND;
      },
    } as Pick<OrphanFinder, 'findForEntity'>;
    const ownership = {
      readable: async (_c: unknown, items: unknown[]) =>
        items.map(() => ({
          claimants: [ORDERS],
          refused: [],
          crowded: false,
          pruneNeeds: [],
        })),
    };
    const router = await createRouter({
      httpAuth: mockServices.httpAuth(),
      permissions,
      auditor: audit.auditor,
      entityWorkloads: new EntityWorkloads(
        catalogServiceMock({ entities: [orders, claimant] }),
      ),
      orphanFinder,
      ownership,
      eventStreams: new OpenStreamLimits(20),
      autoPrune: {
        answer: new AutoPruneAnswer({
          options: readAutoPruneOptions(
            new ConfigReader({ autoPrune: { enabled: true } }),
          ),
          workloads: catalogOf([orders, claimant]),
          keeps,
          snapshotsEnabled: false,
        }),
        keeps: new ClaimKeepRequests({ orphanFinder, ownership, keeps }),
      },
    } as unknown as RouterOptions);
    app = express().use(router).use(mockErrorHandler());
  });

  afterEach(() => close());

  const post = (body: object, auth = mockCredentials.user.header(ALICE)) =>
    request(app).post('/v1/claim-keeps').set('authorization', auth).send(body);
  const unkeep = (
    uid: string,
    auth = mockCredentials.user.header(ALICE),
    entityRef = ORDERS,
  ) =>
    request(app)
      .delete(`/v1/claim-keeps/${uid}?entityRef=${entityRef}&cluster=demo`)
      .set('authorization', auth);
  const orphans = () =>
    request(app)
      .get(`/v1/orphans?entityRef=${ORDERS}`)
      .set('authorization', mockCredentials.user.header(ALICE));

  it('keeps an orphan for the user, audited, and the orphan answer then shows the keep instead of an eligibility date', async () => {
    const before = await orphans();
    expect(before.body.autoPrune).toMatchObject({ state: 'opted-in' });
    expect(before.body.clusters[0].statefulSets[0]).toMatchObject({
      autoPrune: { automated: true },
      orphans: [{ eligibleAt: '2026-11-27T10:00:00.000Z' }],
    });

    permissions.authorize.mockClear();
    const res = await post(validKeep());
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      source: 'card',
      reason: 'holds the November export',
      keptBy: ALICE,
    });
    expect(audit.events.at(-1)).toMatchObject({
      options: {
        eventId: 'claim-keep',
        severityLevel: 'medium',
        meta: {
          actor: ALICE,
          entityRef: ORDERS,
          cluster: 'demo',
          namespace: 'shop',
          claim: 'data-orders-db-2',
          claimUid: UID_2,
        },
      },
      outcome: 'success',
    });
    expect(permissions.authorize.mock.calls[0][0]).toEqual([
      { permission: pvcPrunerPrunePermission, resourceRef: ORDERS },
    ]);

    const after = await orphans();
    const [orphan] = after.body.clusters[0].statefulSets[0].orphans;
    expect(orphan.keep).toMatchObject({ source: 'card', keptBy: ALICE });
    expect(orphan.eligibleAt).toBeUndefined();

    const res2 = await unkeep(UID_2);
    expect(res2.status).toBe(204);
    expect(audit.events.at(-1)).toMatchObject({
      options: { eventId: 'claim-unkeep', meta: { claimUid: UID_2 } },
      outcome: 'success',
    });
    expect(await keeps.keptNow('demo', UID_2)).toBeUndefined();
  });

  it('refuses a service, and a user without pvc-pruner.prune on the entity, storing nothing', async () => {
    expect(
      (await post(validKeep(), mockCredentials.service.header())).status,
    ).toBe(403);
    permissions.authorize.mockImplementation(async requests =>
      requests.map(() => ({ result: AuthorizeResult.DENY })),
    );
    const denied = await post(validKeep());
    expect(denied.status).toBe(403);
    expect(audit.events.at(-1)).toMatchObject({ outcome: 'fail' });
    expect((await unkeep(UID_2)).status).toBe(403);
    expect(await keeps.keptNow('demo', UID_2)).toBeUndefined();
  });

  it.each([
    [
      'a claim that is not one of the StatefulSet’s orphans or kept claims',
      { claim: { name: 'data-orders-db-0', uid: 'u0' } },
      404,
      'is not an orphaned or kept claim',
    ],
    [
      'a StatefulSet the entity does not have',
      { statefulSet: 'payments-db' },
      404,
      'has no StatefulSet shop/payments-db',
    ],
    [
      'a claim re-created since it was read',
      { claim: { name: 'data-orders-db-2', uid: 'old' } },
      400,
      'was re-created',
    ],
    ['a blank reason', { reason: '   ' }, 400, 'Say why'],
    [
      'a reason over 500 characters',
      { reason: 'x'.repeat(501) },
      400,
      'reason',
    ],
    [
      'an end that has passed',
      { until: '2020-01-01T00:00:00.000Z' },
      400,
      'must be in the future',
    ],
    [
      'an end more than a year ahead',
      { until: '2099-01-01T00:00:00.000Z' },
      400,
      'at most a year ahead',
    ],
  ])('refuses %s', async (_, more, status, message) => {
    const res = await post(validKeep(more as Partial<KeepClaimRequest>));
    expect(res.status).toBe(status);
    expect(res.body.error.message).toContain(message);
    expect(await keeps.keptNow('demo', UID_2)).toBeUndefined();
  });

  it('answers 409 when an automatic prune is deleting the claim', async () => {
    await keeps.markDeleting('demo', UID_2, 'job-1');
    const res = await post(validKeep());
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain(
      'An automatic prune is deleting data-orders-db-2 right now',
    );
  });

  it('unkeeps a claim no longer among the entity’s only when it was kept through the entity', async () => {
    await keeps.keep({
      cluster: 'demo',
      namespace: 'shop',
      claimName: 'data-payments-db-0',
      claimUid: 'theirs',
      entityRef: 'component:default/payments',
      reason: 'theirs',
      keptBy: 'user:default/bob',
    });
    const res = await unkeep('theirs');
    expect(res.status).toBe(404);
    expect(await keeps.keptNow('demo', 'theirs')).toBeDefined();
  });

  it("another entity's owner claiming the same StatefulSet can neither remove nor shorten the keep", async () => {
    const MALLORY = mockCredentials.user.header('user:default/mallory');
    expect((await post(validKeep())).status).toBe(201);

    const shortened = await post(
      validKeep({
        entityRef: CLAIMANT,
        reason: 'a minute will do',
        until: new Date(Date.now() + 60_000).toISOString(),
      }),
      MALLORY,
    );
    expect(shortened.status).toBe(201);
    // Through their entity they remove their own keep only.
    expect((await unkeep(UID_2, MALLORY, CLAIMANT)).status).toBe(204);
    const removed = await unkeep(UID_2, MALLORY, CLAIMANT);
    expect(removed.status).toBe(404);
    expect(removed.body.error.message).toContain(
      `is not kept through ${CLAIMANT}`,
    );

    const kept = await keeps.keptNow('demo', UID_2);
    expect(kept).toMatchObject({ keptBy: ALICE });
    expect(kept?.until).toBeUndefined();
    const [orphan] = (await orphans()).body.clusters[0].statefulSets[0].orphans;
    expect(orphan.keep).toMatchObject({ keptBy: ALICE });
    expect(orphan.keep.until).toBeUndefined();
  });
});
