import { TEST_SEAL } from '../__testUtils__/testSeal';
import { mockCredentials } from '@backstage/backend-test-utils';
import { NotAllowedError, NotFoundError } from '@backstage/errors';
import type {
  PruneJob,
  RestoreRequest,
} from 'backstage-plugin-pvc-pruner-common';
import { ClusterRequestError } from '../kubernetes';
import type { EntityWorkloadTarget } from '../orphans';
import {
  FakeRestoreCluster,
  JOB_ID,
  ordersDb,
  prunersSnapshot,
  SNAPSHOT_NAME,
  SNAPSHOT_UID,
} from '../__testUtils__/fakeRestoreCluster';
import { SnapshotRestorer } from './SnapshotRestorer';

const ORDERS = 'component:default/orders';
const TARGET: EntityWorkloadTarget = {
  entity: {} as EntityWorkloadTarget['entity'],
  entityRef: ORDERS,
  labelSelector: 'backstage.io/kubernetes-id=orders',
};
const REQUEST: RestoreRequest = {
  entityRef: ORDERS,
  cluster: 'demo',
  namespace: 'shop',
  statefulSet: 'orders-db',
  snapshot: { name: SNAPSHOT_NAME, uid: SNAPSHOT_UID },
};

describe('SnapshotRestorer', () => {
  let cluster: FakeRestoreCluster;
  let authorizePrune: jest.Mock;
  let getJob: jest.Mock;
  let append: jest.Mock;
  let restorer: SnapshotRestorer;

  beforeEach(() => {
    cluster = new FakeRestoreCluster();
    authorizePrune = jest.fn(async () => ({ claimants: [ORDERS] }));
    getJob = jest.fn(
      async (id: string) =>
        ({
          id,
          cluster: 'demo',
          namespace: 'shop',
          statefulSet: 'orders-db',
        } as PruneJob),
    );
    append = jest.fn(async () => ({}));
    restorer = new SnapshotRestorer({
      gateways: {
        for: async (name: string) => {
          if (name !== 'demo')
            throw new NotFoundError(`Cluster "${name}" is not configured`);
          return cluster.asGateway();
        },
      },
      ownership: { authorizePrune },
      store: { getJob },
      events: { append },
      seal: TEST_SEAL,
    });
  });

  const restore = (request: Partial<RestoreRequest> = {}) =>
    restorer.restore({
      request: { ...REQUEST, ...request },
      target: TARGET,
      credentials: mockCredentials.user('user:default/alice'),
    });

  it('creates the claim from the snapshot, says to what scale it comes back, and records it in the job that took it', async () => {
    const { response, jobId } = await restore();

    expect(cluster.created).toEqual([
      expect.objectContaining({
        metadata: expect.objectContaining({
          name: 'data-orders-db-3',
          labels: { app: 'orders-db' },
          annotations: {
            'pvc-pruner.backstage.io/restored-from': SNAPSHOT_NAME,
            'pvc-pruner.backstage.io/restored-by': 'user:default/alice',
          },
        }),
        spec: expect.objectContaining({
          resources: { requests: { storage: '20Gi' } },
          dataSource: {
            apiGroup: 'snapshot.storage.k8s.io',
            kind: 'VolumeSnapshot',
            name: SNAPSHOT_NAME,
          },
        }),
      }),
    ]);
    expect(response).toEqual({
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
    expect(jobId).toBe(JOB_ID);
    expect(append).toHaveBeenCalledWith({
      jobId: JOB_ID,
      type: 'snapshot-restored',
      pvc: 'data-orders-db-3',
      message: expect.stringContaining(
        `Claim data-orders-db-3 restored from VolumeSnapshot ${SNAPSHOT_NAME} by user:default/alice`,
      ),
    });
    // Authorized on the StatefulSet as the entity selects it, before the snapshot is read.
    expect(authorizePrune).toHaveBeenCalledWith(
      expect.objectContaining({
        cluster: 'demo',
        target: TARGET,
        statefulSet: expect.objectContaining({
          metadata: expect.objectContaining({ name: 'orders-db' }),
        }),
      }),
    );
  });

  it('changes the snapshot, on the resourceVersion it read, before it creates the claim: an expiry that listed it earlier then fails its delete', async () => {
    await restore();
    const patch = cluster.calls.indexOf(
      `patch volumesnapshot shop/${SNAPSHOT_NAME}`,
    );
    expect(patch).toBeGreaterThan(-1);
    expect(patch).toBeLessThan(
      cluster.calls.indexOf('create claim shop/data-orders-db-3'),
    );
    expect(
      cluster.snapshots.get(`shop/${SNAPSHOT_NAME}`)?.metadata?.annotations?.[
        'pvc-pruner.backstage.io/restored-at'
      ],
    ).toEqual(expect.any(String));
  });

  it('creates nothing when the snapshot changed after it was read', async () => {
    const read = cluster.gateway.readVolumeSnapshot;
    cluster.gateway.readVolumeSnapshot = async (namespace, name) => {
      const found = await read(namespace, name);
      // Another writer (a keep, the expiry) changes it right after this read.
      cluster.snapshots.set(`${namespace}/${name}`, {
        ...found!,
        metadata: { ...found!.metadata, resourceVersion: 'changed' },
      });
      return found;
    };
    await expect(restore()).rejects.toThrow(
      'changed or was deleted while it was being restored from',
    );
    expect(cluster.created).toEqual([]);
  });

  it('counts replicas from spec.ordinals.start, and says when the StatefulSet runs the ordinal already', async () => {
    cluster.statefulSets = [ordersDb({ ordinals: { start: 1 }, replicas: 5 })];

    const { response } = await restore();

    expect(response.reattachesAtReplicas).toBe(3);
    expect(response.message).toContain('runs ordinal 3 already');
  });

  it('records nothing in a job of another StatefulSet, and a failed record does not fail the restore', async () => {
    getJob.mockResolvedValueOnce({
      id: JOB_ID,
      cluster: 'demo',
      namespace: 'shop',
      statefulSet: 'payments-db',
    });
    expect((await restore()).jobId).toBeUndefined();
    cluster.claims.clear();
    getJob.mockRejectedValueOnce(new Error('database down'));
    await expect(restore()).resolves.toMatchObject({
      response: { claim: { name: 'data-orders-db-3' } },
    });
    expect(append).not.toHaveBeenCalled();
  });

  it.each([
    ['a snapshot that does not exist', () => cluster.snapshots.clear()],
    [
      'a snapshot pvc-pruner did not take',
      () =>
        cluster.addSnapshot(
          prunersSnapshot({}, { 'app.kubernetes.io/managed-by': 'someone' }),
        ),
    ],
    [
      'a snapshot of another StatefulSet',
      () =>
        cluster.addSnapshot(
          prunersSnapshot(
            {},
            { 'pvc-pruner.backstage.io/statefulset': 'payments-db' },
          ),
        ),
    ],
  ])('answers 404 for %s, and creates nothing', async (_what, arrange) => {
    arrange();
    await expect(restore()).rejects.toMatchObject({ name: 'NotFoundError' });
    expect(cluster.created).toEqual([]);
  });

  it.each<[string, () => void, RegExp]>([
    ['another uid under that name', () => undefined, /is another one now/],
    [
      'a snapshot not ready',
      () => {
        const s = prunersSnapshot();
        s.status!.readyToUse = false;
        cluster.addSnapshot(s);
      },
      /not ready/,
    ],
    [
      'a failed snapshot',
      () => {
        const s = prunersSnapshot();
        s.status!.error = { message: 'driver exploded' };
        cluster.addSnapshot(s);
      },
      /driver exploded/,
    ],
    [
      'a content that points at another snapshot',
      () => {
        cluster.contents.get('snapcontent-1')!.spec!.volumeSnapshotRef!.uid =
          'other';
      },
      /does not point back/,
    ],
    [
      'a claim of that name',
      () =>
        cluster.claims.set('shop/data-orders-db-3', {
          metadata: { name: 'data-orders-db-3' },
        }),
      /A claim named data-orders-db-3 exists/,
    ],
    [
      'a claim created in between (409 on the create)',
      () => {
        cluster.createFailsWith = new ClusterRequestError(
          'demo',
          'exists',
          409,
          'AlreadyExists',
        );
      },
      /A claim named data-orders-db-3 exists/,
    ],
    [
      'a claim-name annotation that is no claim of the StatefulSet',
      () => {
        const s = prunersSnapshot({
          'pvc-pruner.backstage.io/claim-name': 'kube-root-ca',
        });
        s.spec!.source!.persistentVolumeClaimName = 'kube-root-ca';
        cluster.addSnapshot(s);
      },
      /"kube-root-ca" is not a claim of StatefulSet orders-db/,
    ],
    [
      'labels that are not labels',
      () =>
        cluster.addSnapshot(
          prunersSnapshot({
            'pvc-pruner.backstage.io/claim-labels': JSON.stringify({
              'a b': 'c',
            }),
          }),
        ),
      /is not a label key/,
    ],
  ])(
    'answers 409 for %s, and creates nothing',
    async (what, arrange, message) => {
      arrange();
      const uid = what.startsWith('another uid') ? 'not-the-uid' : SNAPSHOT_UID;
      const error = await restore({
        snapshot: { name: SNAPSHOT_NAME, uid },
      }).catch(e => e);
      expect(error).toMatchObject({ name: 'ConflictError' });
      expect(error.message).toMatch(message);
      expect(cluster.created).toEqual([]);
    },
  );

  it('refuses a snapshot only labelled as pvc-pruner’s, without its seal: whoever may label snapshots cannot plant one to restore', async () => {
    cluster.addSnapshot(prunersSnapshot(), { sealed: false });
    await expect(restore()).rejects.toThrow(NotFoundError);
    expect(cluster.created).toEqual([]);
  });

  it('refuses a StatefulSet the entity does not select, and what ownership refuses, before reading the snapshot', async () => {
    await expect(restore({ statefulSet: 'payments-db' })).rejects.toThrow(
      /is not one of component:default\/orders's/,
    );
    authorizePrune.mockRejectedValueOnce(new NotAllowedError('also claimed'));
    await expect(restore()).rejects.toThrow('also claimed');
    expect(cluster.calls.some(c => c.startsWith('get volumesnapshot'))).toBe(
      false,
    );
    expect(cluster.created).toEqual([]);
  });

  it('refuses a cluster or namespace the entity does not map to, an unknown cluster, and names a failing cluster', async () => {
    await expect(
      restorer.restore({
        request: REQUEST,
        target: { ...TARGET, namespace: 'billing' },
        credentials: mockCredentials.user(),
      }),
    ).rejects.toThrow(NotAllowedError);
    await expect(restore({ cluster: 'nowhere' })).rejects.toMatchObject({
      name: 'InputError',
    });
    cluster.failWith = new ClusterRequestError(
      'demo',
      'cluster "demo" refused create persistentvolumeclaim: 403 Forbidden',
      403,
    );
    await expect(restore()).rejects.toMatchObject({
      name: 'ServiceUnavailableError',
      message: expect.stringContaining('403 Forbidden'),
    });
  });
});
