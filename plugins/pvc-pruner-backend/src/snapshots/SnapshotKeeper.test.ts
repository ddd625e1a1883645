import { TEST_SEAL } from '../__testUtils__/testSeal';
import { mockCredentials } from '@backstage/backend-test-utils';
import { NotAllowedError, NotFoundError } from '@backstage/errors';
import type { V1StatefulSet } from '@kubernetes/client-node';
import type {
  KeepSnapshotRequest,
  PruneJob,
} from 'backstage-plugin-pvc-pruner-common';
import { PriceList } from '../cost';
import { ClusterRequestError, type KubeGateway } from '../kubernetes';
import type { VolumeSnapshot } from '../kubernetes/volumeSnapshotTypes';
import type { EntityWorkloadTarget } from '../orphans';
import { SnapshotKeeper } from './SnapshotKeeper';

const NOW = new Date('2026-12-20T12:00:00Z');
const DAY_MS = 86_400_000;
const JOB = '6f1c2a3b-1111-4222-8333-944455556666';
const UID = '0a9b8c7d-1111-4222-8333-944455556666';
const ORDERS = 'component:default/orders';

const TARGET = {
  entityRef: ORDERS,
  labelSelector: 'backstage.io/kubernetes-id=orders',
} as EntityWorkloadTarget;

const request = (
  keepUntil: string,
  over: Partial<KeepSnapshotRequest['snapshot']> = {},
): KeepSnapshotRequest => ({
  snapshot: {
    entityRef: ORDERS,
    cluster: 'demo',
    namespace: 'shop',
    statefulSet: 'orders-db',
    snapshot: { name: 'data-orders-db-3-6f1c2a3b', uid: UID },
    ...over,
  },
  keepUntil,
});

/** A ready snapshot of orders-db's claim, created 2 days before NOW (so expiring 5 days after it, with 7 days' retention). */
function snapshot(
  over: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    uid?: string;
  } = {},
): VolumeSnapshot {
  return TEST_SEAL.sealed({
    metadata: {
      name: 'data-orders-db-3-6f1c2a3b',
      namespace: 'shop',
      uid: over.uid ?? UID,
      resourceVersion: '41',
      creationTimestamp: new Date(
        NOW.getTime() - 2 * DAY_MS,
      ).toISOString() as unknown as Date,
      labels: over.labels ?? {
        'app.kubernetes.io/managed-by': 'pvc-pruner',
        'pvc-pruner.backstage.io/job': JOB,
        'pvc-pruner.backstage.io/statefulset': 'orders-db',
        'pvc-pruner.backstage.io/claim-uid': 'claim-uid-3',
      },
      annotations: {
        'pvc-pruner.backstage.io/claim-name': 'data-orders-db-3',
        ...over.annotations,
      },
    },
    status: {
      readyToUse: true,
      restoreSize: '20Gi',
      boundVolumeSnapshotContentName: 'snapcontent-0a9b8c7d',
    },
  });
}

function setUp(
  served: VolumeSnapshot | undefined,
  options: {
    statefulSets?: string[];
    authorize?: () => Promise<unknown>;
    patchError?: Error;
    jobs?: PruneJob[];
  } = {},
) {
  const patches: Array<{
    namespace: string;
    name: string;
    pre: unknown;
    annotations: Record<string, string | null>;
  }> = [];
  const gateway = {
    cluster: 'demo',
    listStatefulSets: async () =>
      (options.statefulSets ?? ['orders-db']).map(
        name => ({ metadata: { name, namespace: 'shop' } } as V1StatefulSet),
      ),
    readStatefulSet: async () => ({} as V1StatefulSet),
    readVolumeSnapshot: async () => served && structuredClone(served),
    patchVolumeSnapshotAnnotations: async (
      namespace: string,
      name: string,
      pre: unknown,
      annotations: Record<string, string>,
    ) => {
      if (options.patchError) throw options.patchError;
      patches.push({ namespace, name, pre, annotations });
      const patched = structuredClone(served!);
      patched.metadata!.annotations = {
        ...patched.metadata!.annotations,
        ...annotations,
      };
      return patched;
    },
  } as unknown as KubeGateway;
  const authorizePrune = jest.fn(options.authorize ?? (async () => ({})));
  const appended: any[] = [];
  const keeper = new SnapshotKeeper({
    gateways: {
      for: async cluster => {
        if (cluster !== 'demo')
          throw new NotFoundError(`Cluster "${cluster}" is not configured`);
        return gateway;
      },
    },
    ownership: { authorizePrune } as any,
    history: {
      getJob: async id => (options.jobs ?? []).find(j => j.id === id),
      append: async e => void appended.push(e),
    },
    seal: TEST_SEAL,
    retentionDays: 7,
    maxKeepDays: 90,
    prices: PriceList.of({ currency: 'EUR', snapshotPricePerGiBMonth: 0.05 }),
    now: () => NOW,
  });
  const keep = (body: KeepSnapshotRequest) =>
    keeper.keep({
      request: body,
      target: TARGET,
      credentials: mockCredentials.user('user:default/alice'),
    });
  return { keep, patches, appended, authorizePrune };
}

const inDays = (days: number) =>
  new Date(NOW.getTime() + days * DAY_MS).toISOString();

describe('SnapshotKeeper', () => {
  it('sets keep-until by a patch that carries the uid and resourceVersion, answers the snapshot as kept, and tells its job', async () => {
    const { keep, patches, appended, authorizePrune } = setUp(snapshot(), {
      jobs: [
        {
          id: JOB,
          cluster: 'demo',
          namespace: 'shop',
          statefulSet: 'orders-db',
        } as unknown as PruneJob,
      ],
    });

    const kept = await keep(request(inDays(30)));

    expect(authorizePrune).toHaveBeenCalledWith(
      expect.objectContaining({
        target: TARGET,
        cluster: 'demo',
        statefulSet: expect.objectContaining({
          metadata: expect.objectContaining({ name: 'orders-db' }),
        }),
      }),
    );
    expect(patches).toEqual([
      {
        namespace: 'shop',
        name: 'data-orders-db-3-6f1c2a3b',
        pre: { uid: UID, resourceVersion: '41' },
        annotations: { 'pvc-pruner.backstage.io/keep-until': inDays(30) },
      },
    ]);
    expect(kept).toEqual({
      name: 'data-orders-db-3-6f1c2a3b',
      namespace: 'shop',
      uid: UID,
      statefulSet: 'orders-db',
      claimName: 'data-orders-db-3',
      claimUid: 'claim-uid-3',
      jobId: JOB,
      createdAt: new Date(NOW.getTime() - 2 * DAY_MS).toISOString(),
      readyToUse: true,
      restoreBytes: 20 * 2 ** 30,
      restoreSize: '20Gi',
      expiresAt: inDays(30),
      keepUntil: inDays(30),
      monthlyCost: expect.closeTo(1),
      restorable: true,
    });
    expect(appended).toEqual([
      {
        jobId: JOB,
        type: 'snapshot-kept',
        pvc: 'data-orders-db-3',
        message: expect.stringContaining(
          `kept until ${inDays(30)} by user:default/alice`,
        ),
      },
    ]);
  });

  it('refuses (403) a StatefulSet the entity does not select, before reading the snapshot', async () => {
    const { keep, patches, authorizePrune } = setUp(snapshot(), {
      statefulSets: ['payments-db'],
    });
    await expect(keep(request(inDays(30)))).rejects.toThrow(NotAllowedError);
    expect(authorizePrune).not.toHaveBeenCalled();
    expect(patches).toEqual([]);
  });

  it('refuses (403) whoever may not prune on every claimant', async () => {
    const { keep, patches } = setUp(snapshot(), {
      authorize: async () => {
        throw new NotAllowedError('also claimed by component:default/billing');
      },
    });
    await expect(keep(request(inDays(30)))).rejects.toThrow(/also claimed by/);
    expect(patches).toEqual([]);
  });

  it('answers 400 for an unknown cluster', async () => {
    const { keep } = setUp(snapshot());
    await expect(
      keep(request(inDays(30), { cluster: 'elsewhere' })),
    ).rejects.toMatchObject({
      name: 'InputError',
      message: 'Unknown cluster "elsewhere"',
    });
  });

  it.each([
    ['does not exist', undefined],
    [
      'is not managed by pvc-pruner',
      snapshot({
        labels: { 'pvc-pruner.backstage.io/statefulset': 'orders-db' },
      }),
    ],
    [
      "is another StatefulSet's",
      snapshot({
        labels: {
          'app.kubernetes.io/managed-by': 'pvc-pruner',
          'pvc-pruner.backstage.io/statefulset': 'payments-db',
        },
      }),
    ],
  ])('answers 404 for a snapshot that %s', async (_why, served) => {
    const { keep, patches } = setUp(served);
    await expect(keep(request(inDays(30)))).rejects.toMatchObject({
      name: 'NotFoundError',
    });
    expect(patches).toEqual([]);
  });

  it('answers 409 when the snapshot of that name has another uid than the caller saw', async () => {
    const { keep, patches } = setUp(snapshot({ uid: 'another-uid' }));
    await expect(keep(request(inDays(30)))).rejects.toMatchObject({
      name: 'ConflictError',
      message: expect.stringContaining('uid another-uid'),
    });
    expect(patches).toEqual([]);
  });

  it('answers 409 when the patch meets a changed snapshot', async () => {
    const { keep } = setUp(snapshot(), {
      patchError: new ClusterRequestError(
        'demo',
        'the object has been modified',
        409,
        'Conflict',
      ),
    });
    await expect(keep(request(inDays(30)))).rejects.toMatchObject({
      name: 'ConflictError',
    });
  });

  it('answers 503 when the cluster fails the patch otherwise', async () => {
    const { keep } = setUp(snapshot(), {
      patchError: new ClusterRequestError(
        'demo',
        'cluster "demo" is unreachable',
      ),
    });
    await expect(keep(request(inDays(30)))).rejects.toMatchObject({
      name: 'ServiceUnavailableError',
    });
  });

  it.each([
    ['in the past', inDays(-1), /is not in the future/],
    [
      'not later than the current expiry',
      inDays(5),
      /is not later than the snapshot's current expiry, 2026-12-25T12:00:00.000Z/,
    ],
    [
      'past maxKeepDays',
      inDays(90.5),
      /is more than 90 days from now .*pvcPruner\.snapshots\.maxKeepDays/,
    ],
  ])(
    'answers 400 for a keepUntil %s, naming the limit',
    async (_w, at, message) => {
      const { keep, patches } = setUp(snapshot());
      await expect(keep(request(at))).rejects.toMatchObject({
        name: 'InputError',
        message: expect.stringMatching(message),
      });
      expect(patches).toEqual([]);
    },
  );

  it('takes a keepUntil exactly maxKeepDays ahead, and one later than an existing keep-until', async () => {
    const { keep, patches } = setUp(
      snapshot({
        annotations: { 'pvc-pruner.backstage.io/keep-until': inDays(20) },
      }),
    );
    await expect(keep(request(inDays(20)))).rejects.toMatchObject({
      name: 'InputError',
    });
    await keep(request(inDays(90)));
    expect(patches).toHaveLength(1);
  });
});
