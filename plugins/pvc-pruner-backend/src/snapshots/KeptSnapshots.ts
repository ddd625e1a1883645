import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import type { V1StatefulSet } from '@kubernetes/client-node';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import {
  parseQuantity,
  type ClusterSnapshots,
  type KeptSnapshot,
  type SnapshotsResponse,
  type StatefulSetOrphans,
  type StatefulSetSnapshots,
} from 'backstage-plugin-pvc-pruner-common';
import {
  ClusterRequestError,
  KubeGateways,
  VolumeSnapshot,
} from '../kubernetes';
import { EntityWorkloadTarget, errorSection, OrphanFinder } from '../orphans';
import { admitReadersOf, type OwnershipChecks } from '../ownership';
import { mapLimited } from '../mapLimited';
import { MANAGED_BY, sourceClaimOf, SNAPSHOT_LABELS } from './snapshotMetadata';
import { restorePlan } from './restorePlan';
import { keptSnapshotOf } from './keptSnapshot';
import type { SnapshotSeal } from './SnapshotSeal';
import type { PriceList } from '../cost';

/** The most snapshots listed per StatefulSet (the newest); the rest are left out of the answer. */
export const MAX_SNAPSHOTS_PER_STATEFULSET = 500;

/** Namespaces whose snapshots are listed at once, per cluster. */
const NAMESPACE_CONCURRENCY = 8;

export interface KeptSnapshotsOptions {
  /** `pvcPruner.snapshots.retentionDays`: a snapshot expires that long after its creation, unless kept longer. */
  retentionDays: number;
  /** The prices: with `snapshotPricePerGiBMonth` set, each snapshot and the totals carry a monthly cost. */
  prices?: PriceList;
  /** Replaces {@link MAX_SNAPSHOTS_PER_STATEFULSET} (tests). */
  maxPerStatefulSet?: number;
}

/** The StatefulSet as the restore rule reads it, from its report: its name, templates and first ordinal. */
function statefulSetOf(report: StatefulSetOrphans): V1StatefulSet {
  return {
    metadata: { name: report.name, namespace: report.namespace },
    spec: {
      selector: {},
      serviceName: '',
      template: {},
      ordinals: { start: report.ordinals.start },
      volumeClaimTemplates: report.templates.map(name => ({
        metadata: { name },
      })),
    },
  };
}

/** The claims the scan saw of the StatefulSet, by name: in use, kept and orphaned. */
function claimNamesOf(report: StatefulSetOrphans): Set<string> {
  return new Set([
    ...report.orphans.map(o => o.name),
    ...report.kept.map(k => k.name),
    ...report.inUse.flatMap(group =>
      group.ordinals.map(o => `${group.template}-${report.name}-${o}`),
    ),
  ]);
}

function timeOf(text: unknown): number {
  const time =
    typeof text === 'string' || text instanceof Date
      ? new Date(text).getTime()
      : NaN;
  return Number.isFinite(time) ? time : 0;
}

/**
 * The VolumeSnapshots pvc-pruner kept of an entity's StatefulSets' claims
 * (`GET /v1/snapshots`), read live from each cluster by the
 * `app.kubernetes.io/managed-by=pvc-pruner` label, one list per namespace.
 * Only the StatefulSets the caller may read are shown (every claimant
 * readable, as the orphans' read decides), and a snapshot belongs to one by
 * its namespace and `pvc-pruner.backstage.io/statefulset` label. Each says
 * when it expires and whether a restore would take it now. A cluster that
 * fails, or serves no VolumeSnapshots, is its own section with the error.
 */
export class KeptSnapshots {
  private readonly maxPerStatefulSet: number;

  constructor(
    private readonly deps: {
      orphanFinder: Pick<OrphanFinder, 'findForEntity'>;
      gateways: Pick<KubeGateways, 'for'>;
      ownership: Pick<OwnershipChecks, 'readable'>;
      seal: Pick<SnapshotSeal, 'isTakenOf'>;
    },
    private readonly options: KeptSnapshotsOptions,
  ) {
    this.maxPerStatefulSet =
      options.maxPerStatefulSet ?? MAX_SNAPSHOTS_PER_STATEFULSET;
  }

  async list(
    target: EntityWorkloadTarget,
    credentials: BackstageCredentials,
    requestAuth: KubernetesRequestAuth = {},
  ): Promise<SnapshotsResponse> {
    const found = await this.deps.orphanFinder.findForEntity(
      target,
      requestAuth,
      admitReadersOf(this.deps.ownership, credentials, target),
    );
    const read = await Promise.all(
      found.clusters.map(section =>
        section.ok
          ? this.clusterSection(
              section.cluster,
              section.statefulSets,
              requestAuth,
            ).catch(e => ({
              section: errorSection(section.cluster, this.explained(e)),
              notListedBytes: 0,
            }))
          : { section, notListedBytes: 0 },
      ),
    );
    const clusters: ClusterSnapshots[] = read.map(r => r.section);
    const statefulSets = clusters.flatMap(c => (c.ok ? c.statefulSets : []));
    const kept = statefulSets.flatMap(s => s.snapshots);
    const notListed = statefulSets.reduce((n, s) => n + (s.notListed ?? 0), 0);
    const { prices } = this.options;
    const bytes =
      kept.reduce((sum, s) => sum + (s.restoreBytes ?? 0), 0) +
      read.reduce((sum, r) => sum + r.notListedBytes, 0);
    return {
      entityRef: target.entityRef,
      clusters,
      totals: {
        snapshots: kept.length + notListed,
        bytes,
        ...(prices?.snapshotPerGiBMonth !== undefined
          ? { monthlyCost: prices.snapshotMonthlyCost(bytes)! }
          : {}),
      },
      ...(prices?.snapshotPerGiBMonth !== undefined
        ? {
            pricing: {
              currency: prices.currency,
              unpricedStorageClasses: [],
              snapshotPricePerGiBMonth: prices.snapshotPerGiBMonth,
            },
          }
        : {}),
    };
  }

  /** A 404 on the list is a cluster without the snapshot API: said so, not as a bare 404. */
  private explained(e: unknown): unknown {
    if (e instanceof ClusterRequestError && e.statusCode === 404)
      return new ClusterRequestError(
        e.cluster,
        `cluster "${e.cluster}" serves no VolumeSnapshots (snapshot.storage.k8s.io/v1): it has no external-snapshotter CRDs, so pvc-pruner kept no snapshots there`,
        404,
        e.reason,
      );
    return e;
  }

  private async clusterSection(
    cluster: string,
    reports: StatefulSetOrphans[],
    requestAuth: KubernetesRequestAuth,
  ): Promise<{ section: ClusterSnapshots; notListedBytes: number }> {
    if (reports.length === 0)
      return {
        section: { cluster, ok: true, statefulSets: [] },
        notListedBytes: 0,
      };
    const gateway = await this.deps.gateways.for(cluster, requestAuth);
    const namespaces = [...new Set(reports.map(r => r.namespace))].sort();
    const listed = await mapLimited(namespaces, NAMESPACE_CONCURRENCY, ns =>
      gateway.listVolumeSnapshots(
        ns,
        `${SNAPSHOT_LABELS.managedBy}=${MANAGED_BY}`,
      ),
    );
    const byNamespace = new Map(namespaces.map((ns, i) => [ns, listed[i]]));
    const statefulSets: StatefulSetSnapshots[] = [];
    let notListedBytes = 0;
    for (const report of reports) {
      const mine = (byNamespace.get(report.namespace) ?? []).filter(
        s =>
          s.metadata?.namespace === report.namespace &&
          this.deps.seal.isTakenOf(s, report.name),
      );
      if (mine.length === 0) continue;
      mine.sort(
        (a, b) =>
          timeOf(b.metadata?.creationTimestamp) -
            timeOf(a.metadata?.creationTimestamp) ||
          (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
      );
      const shown = mine.slice(0, this.maxPerStatefulSet);
      for (const s of mine.slice(shown.length))
        notListedBytes += parseQuantity(s.status?.restoreSize) ?? 0;
      const claims = claimNamesOf(report);
      const sts = statefulSetOf(report);
      statefulSets.push({
        namespace: report.namespace,
        name: report.name,
        snapshots: shown.map(s => this.keptOf(s, report.name, sts, claims)),
        ...(mine.length > shown.length
          ? { notListed: mine.length - shown.length }
          : {}),
      });
    }
    return { section: { cluster, ok: true, statefulSets }, notListedBytes };
  }

  private keptOf(
    snapshot: VolumeSnapshot,
    statefulSet: string,
    sts: V1StatefulSet,
    claims: ReadonlySet<string>,
  ): KeptSnapshot {
    const claimName = sourceClaimOf(snapshot);
    const plan = restorePlan(snapshot, sts);
    return keptSnapshotOf(snapshot, {
      retentionDays: this.options.retentionDays,
      prices: this.options.prices,
      statefulSet,
      restoreProblem:
        (plan.ok ? undefined : plan.reason) ??
        (claims.has(claimName)
          ? `a claim named ${claimName} exists: a restore never replaces a claim`
          : undefined),
    });
  }
}
