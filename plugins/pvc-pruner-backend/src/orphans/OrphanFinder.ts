import type {
  V1PersistentVolume,
  V1StatefulSet,
} from '@kubernetes/client-node';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import {
  ClusterOrphans,
  OrphansResponse,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { EntityWorkloadTarget } from './EntityWorkloads';
import { ClusterRequestError, KubeGateway, KubeGateways } from '../kubernetes';
import {
  claimAsTheRuleReadsIt,
  classifyInSnapshot,
  NamespaceSnapshot,
  podAsTheRuleReadsIt,
  withVolumes,
} from './orphanRule';

const VOLUME_READ_CONCURRENCY = 16;

async function mapLimited<T, R>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, worker),
  );
  return results;
}

function errorSection(cluster: string, e: unknown): ClusterOrphans {
  const error =
    e instanceof ClusterRequestError
      ? e
      : new ClusterRequestError(cluster, (e as Error).message);
  return {
    cluster,
    ok: false,
    error: {
      name: error.name,
      message: error.message,
      statusCode: error.statusCode,
    },
  };
}

/**
 * Finds provably unused claims: lists the entity's StatefulSets in every
 * cluster, then per namespace every claim and pod (by name, not selector:
 * the StatefulSet controller copies only matchLabels onto claims), and
 * applies the orphan rule. Only the orphans' volumes are read one by one.
 */
export class OrphanFinder {
  constructor(private readonly gateways: KubeGateways) {}

  /** `requestAuth` carries the user's tokens for clusters of client-side providers. */
  async findForEntity(
    target: EntityWorkloadTarget,
    requestAuth: KubernetesRequestAuth = {},
  ): Promise<OrphansResponse> {
    const clusters = (await this.gateways.list()).filter(
      c => !target.cluster || c.name === target.cluster,
    );
    if (target.cluster && clusters.length === 0) {
      const section = errorSection(
        target.cluster,
        new ClusterRequestError(
          target.cluster,
          `cluster "${target.cluster}" (from the entity's backstage.io/kubernetes-cluster annotation) is not configured in kubernetes.clusterLocatorMethods`,
        ),
      );
      return {
        entityRef: target.entityRef,
        clusters: [section],
        totals: { orphans: 0, reclaimableBytes: 0, retainedBytes: 0 },
      };
    }
    const sections = await Promise.all(
      clusters.map(async c => {
        try {
          const gateway = this.gateways.forCluster(c, requestAuth);
          const statefulSets = await gateway.listStatefulSets(
            target.labelSelector,
            target.namespace,
          );
          return {
            cluster: c.name,
            ok: true as const,
            statefulSets: await this.classify(gateway, statefulSets),
          };
        } catch (e) {
          return errorSection(c.name, e);
        }
      }),
    );
    const found = sections.flatMap(s => (s.ok ? s.statefulSets : []));
    return {
      entityRef: target.entityRef,
      clusters: sections,
      totals: {
        orphans: found.reduce((n, s) => n + s.orphans.length, 0),
        reclaimableBytes: found.reduce((n, s) => n + s.reclaimableBytes, 0),
        retainedBytes: found.reduce((n, s) => n + s.retainedBytes, 0),
      },
    };
  }

  /** Classifies the claims of StatefulSets, reading each namespace's claims and pods once. */
  async classify(
    gateway: KubeGateway,
    statefulSets: V1StatefulSet[],
  ): Promise<StatefulSetOrphans[]> {
    const namespaces = [
      ...new Set(statefulSets.map(s => s.metadata?.namespace ?? '')),
    ];
    const snapshots = new Map(
      await Promise.all(
        namespaces.map(async ns => {
          const [claims, pods] = await Promise.all([
            gateway.listClaims(ns, claimAsTheRuleReadsIt),
            gateway.listPods(ns, podAsTheRuleReadsIt),
          ]);
          return [ns, new NamespaceSnapshot(ns, claims, pods)] as const;
        }),
      ),
    );
    const snapshotOf = (sts: V1StatefulSet) =>
      snapshots.get(sts.metadata?.namespace ?? '')!;
    const firstPass = statefulSets.map(sts =>
      classifyInSnapshot(sts, snapshotOf(sts), new Map()),
    );
    const volumeNames = [
      ...new Set(
        firstPass.flatMap(r =>
          r.orphans.flatMap(o => (o.volume ? [o.volume.name] : [])),
        ),
      ),
    ];
    const volumes = new Map<string, V1PersistentVolume>();
    const read = await mapLimited(volumeNames, VOLUME_READ_CONCURRENCY, name =>
      gateway.readVolume(name),
    );
    read.forEach((pv, i) => pv && volumes.set(volumeNames[i], pv));
    return firstPass
      .map(report => withVolumes(report, volumes))
      .sort(
        (a, b) =>
          a.namespace.localeCompare(b.namespace) ||
          a.name.localeCompare(b.name),
      );
  }
}
