import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import type { LocatedCluster } from '../kubernetes';
import type {
  ClusterLeftBehind,
  LeftBehindGroup,
  LeftBehindResponse,
} from 'backstage-plugin-pvc-pruner-common';
import { readAutoscalers } from '../autoscaling';
import {
  ClusterCache,
  ClusterCaches,
  KubeGateway,
  KubeGateways,
  parseLabelSelector,
} from '../kubernetes';
import { type ClaimLineageStore, unverifiedClaimants } from '../lineage';
import { mapLimited } from '../mapLimited';
import type { EntityWorkloadTarget, OrphanAnnotator } from '../orphans';
import { errorSection } from '../orphans/OrphanFinder';
import {
  claimAsTheRuleReadsIt,
  claimWithLabels,
  podAsTheRuleReadsIt,
  volumeAsTheRuleReadsIt,
  withVolumes,
} from '../orphans/orphanRule';
import type { ClaimantIndex } from '../ownership';
import { FoundGroup, leftBehindIn } from './leftBehindGroups';

/** Namespaces of one cluster read for an entity. */
const MAX_NAMESPACES = 50;
/** Lineage rows naming an entity read to find its namespaces. */
const MAX_LINEAGE_ROWS = 5000;
/** Groups shown per cluster. */
const MAX_GROUPS = 100;
/** Groups found per namespace, before any permission check (finding them reads nothing more). */
const MAX_GROUPS_PER_NAMESPACE = 200;
const NAMESPACE_CONCURRENCY = 4;
const VOLUME_READ_CONCURRENCY = 16;
/** Volumes read one GET each without a watch cache; more are read with one list of the cluster's volumes. */
const MAX_VOLUME_GETS = 20;
/** Refused claimants named per cluster. */
const NAMED_REFUSED = 20;

/** Who may see a group: as OwnershipChecks.readable answers for StatefulSets. */
export type AdmitGroups = (
  groups: FoundGroup[],
) => Promise<Array<{ refused: string[]; crowded: boolean }>>;

/** The entities (refs) whose selectors and scope match a claim's labels in a cluster and namespace. */
export function claimantsByLabels(
  index: ClaimantIndex,
  cluster: string,
  namespace: string,
) {
  return (labels: Record<string, string>) =>
    index
      .claimantsOf(cluster, { metadata: { namespace, labels } })
      .map(e => e.entityRef);
}

/**
 * Finds the claims that deleted StatefulSets left behind (see leftBehindIn):
 * reads each namespace's claims, pods, StatefulSets and autoscalers live
 * from the API server, with the claims' recorded lineage, and adds the
 * orphans' volumes and costs as the orphan finder does. An entity's
 * namespaces are those where its lineage records claims and those where
 * claims carry labels its selector matches.
 */
export class LeftBehindFinder {
  constructor(
    private readonly deps: {
      gateways: KubeGateways;
      lineage: Pick<ClaimLineageStore, 'lineageOf' | 'lineageClaimedBy'>;
      /** The catalog read claimants come from (WorkloadCatalog). */
      workloads: { warm(): Promise<ClaimantIndex> };
      annotator?: OrphanAnnotator;
      /** Read from a cluster's watch cache once it is synced, as scans are. */
      caches?: ClusterCaches;
    },
  ) {}

  /** The cluster's watch cache when it is synced (never for a user's own token), as the orphan finder reads it. */
  async cacheOf(
    details: LocatedCluster,
    gateway: KubeGateway,
    use?: { start: boolean },
  ): Promise<ClusterCache | undefined> {
    return this.deps.caches?.whenReady(details, gateway, use);
  }

  /**
   * Every group of left-behind claims in these namespaces of the gateway's
   * cluster (at most MAX_GROUPS_PER_NAMESPACE each), from its synced watch
   * cache when given, else live; without their volumes and costs, which
   * are read (withVolumesAndCosts) only for the groups a caller is shown.
   */
  async groupsIn(
    gateway: KubeGateway,
    namespaces: string[],
    cache?: ClusterCache,
  ): Promise<FoundGroup[]> {
    const cluster = gateway.cluster;
    const index = await this.deps.workloads.warm();
    const found = (
      await mapLimited(namespaces, NAMESPACE_CONCURRENCY, async namespace => {
        const [claims, pods, statefulSets, autoscalers] = cache
          ? [
              [...cache.claims.inNamespace(namespace).values()],
              [...cache.pods.inNamespace(namespace).values()],
              [...cache.statefulSets.inNamespace(namespace).values()],
              cache.autoscalersIn(namespace),
            ]
          : await Promise.all([
              gateway.listClaims(namespace, claimWithLabels),
              gateway.listPods(namespace, podAsTheRuleReadsIt),
              gateway.listStatefulSets('', namespace),
              readAutoscalers(gateway, namespace),
            ]);
        const lineage = await this.deps.lineage.lineageOf(
          cluster,
          claims.map(c => c.metadata?.uid ?? ''),
        );
        return leftBehindIn({
          namespace,
          claims,
          pods,
          statefulSets,
          lineage,
          autoscalers,
          claimantsByLabels: claimantsByLabels(index, cluster, namespace),
          unverifiedOf: l => unverifiedClaimants(l, index),
        }).slice(0, MAX_GROUPS_PER_NAMESPACE);
      })
    ).flat();
    return found.map(group => withClaimantsNotInCatalog(group, index));
  }

  /** The groups of claims a deleted StatefulSet of this name left in a namespace of the cluster. */
  async groupsNamed(
    details: LocatedCluster,
    requestAuth: KubernetesRequestAuth,
    where: { namespace: string; statefulSet: string },
  ): Promise<FoundGroup[]> {
    const gateway = this.deps.gateways.forCluster(details, requestAuth);
    const cache = await this.cacheOf(details, gateway);
    return (await this.groupsIn(gateway, [where.namespace], cache)).filter(
      g => g.statefulSet.name === where.statefulSet,
    );
  }

  /** The namespaces of a cluster where an entity may have claims left behind. */
  async namespacesOf(
    gateway: KubeGateway,
    target: EntityWorkloadTarget,
    cache?: ClusterCache,
  ): Promise<string[]> {
    const matches = cache && parseLabelSelector(target.labelSelector);
    const [recorded, labelled] = await Promise.all([
      this.deps.lineage.lineageClaimedBy(
        gateway.cluster,
        target.entityRef,
        MAX_LINEAGE_ROWS,
      ),
      cache && matches
        ? [...cache.claims.all()].filter(c => matches(c.metadata?.labels))
        : gateway.listClaimsMatching(
            target.labelSelector,
            target.namespace,
            claimAsTheRuleReadsIt,
          ),
    ]);
    const namespaces = new Set([
      ...recorded.map(l => l.namespace),
      ...labelled.map(c => c.metadata?.namespace ?? ''),
    ]);
    return [...namespaces]
      .filter(ns => ns && (!target.namespace || ns === target.namespace))
      .sort()
      .slice(0, MAX_NAMESPACES);
  }

  /**
   * The groups of which the entity is a claimant, in every cluster it may be
   * in; `admit` decides which the caller may see, and the others are only
   * counted, with the claimants that refused.
   */
  async findForEntity(
    target: EntityWorkloadTarget,
    requestAuth: KubernetesRequestAuth,
    admit: AdmitGroups,
  ): Promise<LeftBehindResponse> {
    const clusters = (await this.deps.gateways.list()).filter(
      c => !target.cluster || c.name === target.cluster,
    );
    const sections = await Promise.all(
      clusters.map(async (details): Promise<ClusterLeftBehind> => {
        try {
          const gateway = this.deps.gateways.forCluster(details, requestAuth);
          const cache = await this.cacheOf(details, gateway);
          const groups = (
            await this.groupsIn(
              gateway,
              await this.namespacesOf(gateway, target, cache),
              cache,
            )
          ).filter(g => g.claimants.includes(target.entityRef));
          const section = sectionOf(groups, await admit(groups));
          return {
            cluster: details.name,
            ok: true,
            groups: (
              await this.withVolumesAndCosts(gateway, section.shown, cache)
            ).map(wireGroup),
            ...(section.withheld ? { withheld: section.withheld } : {}),
          };
        } catch (e) {
          return errorSection(details.name, e);
        }
      }),
    );
    return { entityRef: target.entityRef, clusters: sections };
  }

  /**
   * The groups with their orphans' volumes, costs and first sightings: from
   * the watch cache when given, else one GET per volume up to
   * MAX_VOLUME_GETS, and one (paginated, capped) list of the cluster's
   * volumes beyond.
   */
  async withVolumesAndCosts(
    gateway: KubeGateway,
    groups: FoundGroup[],
    cache?: ClusterCache,
  ): Promise<FoundGroup[]> {
    if (groups.length === 0) return [];
    const names = [
      ...new Set(
        groups.flatMap(g =>
          g.report.orphans.flatMap(o => (o.volume ? [o.volume.name] : [])),
        ),
      ),
    ];
    const volumes = await volumesNamed(gateway, names, cache);
    let reports = groups.map(g => withVolumes(g.report, volumes));
    if (this.deps.annotator)
      reports = await this.deps.annotator.annotate(gateway.cluster, reports);
    return groups.map((g, i) => ({ ...g, report: reports[i] }));
  }
}

/** The group, saying which of its (recorded) claimants the catalog no longer has. */
function withClaimantsNotInCatalog(
  group: FoundGroup,
  index: ClaimantIndex,
): FoundGroup {
  const gone = group.claimants.filter(ref => !index.get(ref));
  return gone.length > 0 ? { ...group, claimantsNotInCatalog: gone } : group;
}

/** A group as the wire has it. */
export function wireGroup(group: FoundGroup): LeftBehindGroup {
  const { crowded: _crowded, recordedUids: _recordedUids, ...wire } = group;
  return wire;
}

async function volumesNamed(
  gateway: KubeGateway,
  names: string[],
  cache?: ClusterCache,
): Promise<Map<string, V1PersistentVolume>> {
  const volumes = new Map<string, V1PersistentVolume>();
  if (names.length === 0) return volumes;
  if (cache || names.length <= MAX_VOLUME_GETS) {
    const read = await mapLimited(names, VOLUME_READ_CONCURRENCY, async name =>
      cache ? cache.volumes.get(undefined, name) : gateway.readVolume(name),
    );
    read.forEach((pv, i) => pv && volumes.set(names[i], pv));
    return volumes;
  }
  const wanted = new Set(names);
  const { items } = await gateway.listCollection<V1PersistentVolume>(
    'persistentvolumes',
    volumeAsTheRuleReadsIt,
  );
  for (const pv of items)
    if (wanted.has(pv.metadata?.name ?? ''))
      volumes.set(pv.metadata!.name!, pv);
  return volumes;
}

/** The groups shown (at most MAX_GROUPS) and what is said of the others. */
function sectionOf(
  groups: FoundGroup[],
  verdicts: Array<{ refused: string[]; crowded: boolean }>,
): {
  shown: FoundGroup[];
  withheld?: Extract<ClusterLeftBehind, { ok: true }>['withheld'];
} {
  const shown: FoundGroup[] = [];
  const refused = new Set<string>();
  let withheld = 0;
  let overClaimed = 0;
  groups.forEach((g, i) => {
    const verdict = verdicts[i];
    if (verdict.refused.length === 0 && !verdict.crowded) {
      if (shown.length < MAX_GROUPS) shown.push(g);
      return;
    }
    withheld++;
    if (verdict.crowded) overClaimed++;
    else verdict.refused.forEach(r => refused.add(r));
  });
  return {
    shown,
    ...(withheld
      ? {
          withheld: {
            statefulSets: withheld,
            refusedClaimants: [...refused].sort().slice(0, NAMED_REFUSED),
            ...(overClaimed ? { overClaimed } : {}),
          },
        }
      : {}),
  };
}
