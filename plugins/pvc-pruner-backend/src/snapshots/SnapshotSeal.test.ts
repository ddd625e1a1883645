import { TestDatabaseId } from '@backstage/backend-test-utils';
import { storeTestDatabases } from '../__testUtils__/testDatabases';
import type { VolumeSnapshot } from '../kubernetes/volumeSnapshotTypes';
import { SnapshotSeal } from './SnapshotSeal';

const taken: VolumeSnapshot = {
  metadata: {
    name: 'data-orders-db-3-3f2a9c1e',
    namespace: 'shop',
    labels: {
      'app.kubernetes.io/managed-by': 'pvc-pruner',
      'pvc-pruner.backstage.io/job': '6f1c2a3b-1111-4222-8333-944455556666',
      'pvc-pruner.backstage.io/claim-uid': 'claim-uid-3',
      'pvc-pruner.backstage.io/statefulset': 'orders-db',
    },
  },
  spec: { source: { persistentVolumeClaimName: 'data-orders-db-3' } },
};

const seal = new SnapshotSeal(Buffer.alloc(32, 1));
const databases = storeTestDatabases();

describe('SnapshotSeal', () => {
  it('knows the snapshots it sealed, and the StatefulSet they were taken of', () => {
    const sealed = seal.sealed(taken);
    expect(seal.isSealed(sealed)).toBe(true);
    expect(seal.isTakenOf(sealed, 'orders-db')).toBe(true);
    expect(seal.isTakenOf(sealed, 'payments-db')).toBe(false);
  });

  it('refuses a snapshot only labelled as pvc-pruner’s, or sealed with another key', () => {
    expect(seal.isSealed(taken)).toBe(false);
    expect(seal.isTakenOf(taken, 'orders-db')).toBe(false);
    const other = new SnapshotSeal(Buffer.alloc(32, 2)).sealed(taken);
    expect(seal.isSealed(other)).toBe(false);
  });

  it.each<[string, (s: VolumeSnapshot) => VolumeSnapshot]>([
    ['another name', s => ({ ...s, metadata: { ...s.metadata, name: 'x' } })],
    [
      'another namespace',
      s => ({ ...s, metadata: { ...s.metadata, namespace: 'payments' } }),
    ],
    [
      'another StatefulSet label',
      s => ({
        ...s,
        metadata: {
          ...s.metadata,
          labels: {
            ...s.metadata!.labels,
            'pvc-pruner.backstage.io/statefulset': 'payments-db',
          },
        },
      }),
    ],
    [
      'another source claim',
      s => ({
        ...s,
        spec: { source: { persistentVolumeClaimName: 'data-payments-db-0' } },
      }),
    ],
  ])('no longer holds a seal copied onto %s', (_what, change) => {
    expect(seal.isSealed(change(seal.sealed(taken)))).toBe(false);
  });

  it('keeps its seal when keep-until or restored-at change, which they do legitimately', () => {
    const sealed = seal.sealed(taken);
    const kept = {
      ...sealed,
      metadata: {
        ...sealed.metadata,
        annotations: {
          ...sealed.metadata!.annotations,
          'pvc-pruner.backstage.io/keep-until': '2027-01-01T00:00:00.000Z',
          'pvc-pruner.backstage.io/restored-at': '2026-12-03T00:00:00.000Z',
        },
      },
    };
    expect(seal.isSealed(kept)).toBe(true);
  });

  it.each(databases.eachSupportedId())(
    'shares one key, made once, between the replicas of one database (%s)',
    async (databaseId: TestDatabaseId) => {
      const knex = await databases.init(databaseId);
      const database = {
        getClient: async () => knex,
        migrations: { skip: false },
      };
      const first = await SnapshotSeal.fromDatabase(database);
      const second = await SnapshotSeal.fromDatabase(database);
      expect(second.isSealed(first.sealed(taken))).toBe(true);
    },
  );
});
