import { TEST_SEAL } from './testSeal';
import type {
  V1PersistentVolumeClaim,
  V1StatefulSet,
} from '@kubernetes/client-node';
import {
  ClusterRequestError,
  type KubeGateway,
  type VolumeSnapshot,
  type VolumeSnapshotContent,
} from '../kubernetes';

export const SNAPSHOT_UID = '0e7a5c1e-5a1a-4d3e-9f10-000000000001';
export const SNAPSHOT_NAME = 'data-orders-db-3-abcdef12';
export const JOB_ID = '7f1c8a56-2222-4c1e-9d7a-000000000001';

/** shop/orders-db, the entity "orders"'s (kubernetes-id label): 2 replicas of templates data and wal. */
export function ordersDb(overrides: Partial<V1StatefulSet['spec']> = {}) {
  return {
    metadata: {
      name: 'orders-db',
      namespace: 'shop',
      uid: 'sts-uid',
      labels: { 'backstage.io/kubernetes-id': 'orders' },
    },
    spec: {
      replicas: 2,
      selector: {},
      serviceName: 'orders-db',
      template: {},
      volumeClaimTemplates: [
        { metadata: { name: 'data' } },
        { metadata: { name: 'wal' } },
      ],
      ...overrides,
    },
  } as V1StatefulSet;
}

/** pvc-pruner's ready snapshot of shop/data-orders-db-3 (a 10Gi claim), as SnapshotTaker leaves it. */
export function prunersSnapshot(
  annotations: Record<string, string> = {},
  labels: Record<string, string> = {},
): VolumeSnapshot {
  return {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: {
      name: SNAPSHOT_NAME,
      namespace: 'shop',
      uid: SNAPSHOT_UID,
      creationTimestamp: '2026-01-01T00:00:00Z' as unknown as Date,
      labels: {
        'app.kubernetes.io/managed-by': 'pvc-pruner',
        'pvc-pruner.backstage.io/job': JOB_ID,
        'pvc-pruner.backstage.io/claim-uid': 'claim-uid-3',
        'pvc-pruner.backstage.io/statefulset': 'orders-db',
        ...labels,
      },
      annotations: {
        'pvc-pruner.backstage.io/claim-name': 'data-orders-db-3',
        'pvc-pruner.backstage.io/claim-labels': JSON.stringify({
          app: 'orders-db',
        }),
        'pvc-pruner.backstage.io/access-modes': JSON.stringify([
          'ReadWriteOnce',
        ]),
        'pvc-pruner.backstage.io/storage-class': 'standard',
        'pvc-pruner.backstage.io/requested-size': '10Gi',
        ...annotations,
      },
    },
    spec: {
      volumeSnapshotClassName: 'csi',
      source: { persistentVolumeClaimName: 'data-orders-db-3' },
    },
    status: {
      readyToUse: true,
      restoreSize: '20Gi',
      boundVolumeSnapshotContentName: 'snapcontent-1',
    },
  };
}

function matches(selector: string, labels: Record<string, string> = {}) {
  return selector
    .split(',')
    .filter(Boolean)
    .every(term => {
      const [key, value] = term.split('=');
      return labels[key] === value;
    });
}

/**
 * A cluster in memory answering the gateway calls of a restore and of the
 * snapshots' list: its StatefulSets, snapshots, contents and claims; every
 * call and every claim created is recorded.
 */
export class FakeRestoreCluster {
  statefulSets: V1StatefulSet[] = [ordersDb()];
  readonly snapshots = new Map<string, VolumeSnapshot>();
  readonly contents = new Map<string, VolumeSnapshotContent>();
  readonly claims = new Map<string, V1PersistentVolumeClaim>();
  readonly created: V1PersistentVolumeClaim[] = [];
  readonly calls: string[] = [];
  /** Thrown by every call once set (a cluster that fails). */
  failWith?: ClusterRequestError;
  /** Thrown by the claim's create once set. */
  createFailsWith?: ClusterRequestError;

  constructor(readonly cluster = 'demo') {
    this.addSnapshot(prunersSnapshot());
  }

  /** Adds a snapshot (sealed as pvc-pruner's unless told) and a ready content pointing back at it. */
  addSnapshot(snapshot: VolumeSnapshot, options: { sealed?: boolean } = {}) {
    const { namespace, name, uid } = snapshot.metadata!;
    this.snapshots.set(
      `${namespace}/${name}`,
      options.sealed === false ? snapshot : TEST_SEAL.sealed(snapshot),
    );
    const contentName = snapshot.status?.boundVolumeSnapshotContentName;
    if (contentName)
      this.contents.set(contentName, {
        metadata: { name: contentName },
        spec: {
          driver: 'csi',
          volumeSnapshotRef: { namespace, name, uid },
          source: { volumeHandle: 'handle' },
        },
        status: { readyToUse: true, snapshotHandle: 'snap-handle' },
      });
  }

  private async answer<T>(call: string, value: () => T): Promise<T> {
    this.calls.push(call);
    if (this.failWith) throw this.failWith;
    return value();
  }

  readonly gateway = {
    listStatefulSets: (selector: string, namespace?: string) =>
      this.answer(`list statefulsets ${namespace}`, () =>
        this.statefulSets.filter(
          s =>
            (!namespace || s.metadata?.namespace === namespace) &&
            matches(selector, s.metadata?.labels),
        ),
      ),
    readStatefulSet: (namespace: string, name: string) =>
      this.answer(`get statefulset ${namespace}/${name}`, () => {
        const found = this.statefulSets.find(
          s => s.metadata?.namespace === namespace && s.metadata?.name === name,
        );
        if (!found)
          throw new ClusterRequestError(this.cluster, 'not found', 404);
        return found;
      }),
    readVolumeSnapshot: (namespace: string, name: string) =>
      this.answer(`get volumesnapshot ${namespace}/${name}`, () =>
        this.snapshots.get(`${namespace}/${name}`),
      ),
    listVolumeSnapshots: (namespace: string | undefined, selector: string) =>
      this.answer(`list volumesnapshots ${namespace} ${selector}`, () =>
        [...this.snapshots.values()].filter(
          s =>
            (!namespace || s.metadata?.namespace === namespace) &&
            matches(selector, s.metadata?.labels),
        ),
      ),
    readVolumeSnapshotContent: (name: string) =>
      this.answer(`get volumesnapshotcontent ${name}`, () =>
        this.contents.get(name),
      ),
    readClaim: (namespace: string, name: string) =>
      this.answer(`get claim ${namespace}/${name}`, () =>
        this.claims.get(`${namespace}/${name}`),
      ),
    createClaim: (namespace: string, claim: V1PersistentVolumeClaim) =>
      this.answer(`create claim ${namespace}/${claim.metadata?.name}`, () => {
        if (this.createFailsWith) throw this.createFailsWith;
        const created = {
          ...claim,
          metadata: { ...claim.metadata, uid: 'restored-claim-uid' },
        };
        this.created.push(created);
        this.claims.set(`${namespace}/${claim.metadata?.name}`, created);
        return created;
      }),
    patchVolumeSnapshotAnnotations: (
      namespace: string,
      name: string,
      preconditions: { uid: string; resourceVersion: string },
      annotations: Record<string, string | null>,
    ) =>
      this.answer(`patch volumesnapshot ${namespace}/${name}`, () => {
        const snapshot = this.snapshots.get(`${namespace}/${name}`);
        if (!snapshot)
          throw new ClusterRequestError(this.cluster, 'not found', 404);
        const meta = snapshot.metadata!;
        if (
          meta.uid !== preconditions.uid ||
          (meta.resourceVersion ?? '') !== preconditions.resourceVersion
        )
          throw new ClusterRequestError(this.cluster, 'conflict', 409);
        const patched = {
          ...snapshot,
          metadata: {
            ...meta,
            resourceVersion: String(Number(meta.resourceVersion ?? 0) + 1),
            annotations: { ...meta.annotations, ...annotations } as Record<
              string,
              string
            >,
          },
        };
        this.snapshots.set(`${namespace}/${name}`, patched);
        return patched;
      }),
    readNamespace: (name: string) =>
      this.answer(`get namespace ${name}`, () => ({ metadata: { name } })),
  };

  /** The fake as the gateway it stands in for. */
  asGateway(): KubeGateway {
    return this.gateway as unknown as KubeGateway;
  }
}
