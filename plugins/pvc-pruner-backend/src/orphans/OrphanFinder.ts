import type {
  V1PersistentVolume,
  V1StatefulSet,
} from '@kubernetes/client-node';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import {
  ClusterOrphans,
  ClusterStaleness,
  OrphansResponse,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { CachedClassifier } from './CachedClassifier';
import { EntityWorkloadTarget } from './EntityWorkloads';
import { OrphanAnnotator, sumTotals, totalsOf } from './OrphanAnnotator';
import { SharedInFlight } from './SharedInFlight';
import { Admit, admitted, Scanned } from './admitted';
import { mapLimited } from '../mapLimited';
import {
  ClusterCache,
  ClusterCaches,
  ClusterRequestError,
  KubeGateway,
  KubeGateways,
  LocatedCluster,
  singleEqualityOf,
} from '../kubernetes';
import { readAutoscalers } from '../autoscaling';
import type { OrphanSnapshotPlanner } from '../snapshots';
import type { LineageRecorder } from '../lineage';
import {
  claimAsTheRuleReadsIt,
  classifyInSnapshot,
  NamespaceSnapshot,
  PausedStatefulSets,
  podAsTheRuleReadsIt,
  withVolumes,
} from './orphanRule';

const VOLUME_READ_CONCURRENCY = 16;
/** StatefulSet lists in flight at once when scanning many entities. */
const LIST_CONCURRENCY = 16;

/** A cluster's failure as an answer shows it: a ClusterRequestError never carries credentials. */
export function errorSection(
  cluster: string,
  e: unknown,
): ClusterOrphans & { ok: false } {
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

/** One cluster's StatefulSets of some entities, classified (and annotated when the finder annotates). */
export interface ClusterScan {
  cluster: string;
  /** Per entity ref given, its StatefulSets in this cluster. */
  byEntity: Map<string, StatefulSetOrphans[]>;
  /** With `includeUnowned`: the cluster's StatefulSets that none of the entities maps to. */
  unowned: StatefulSetOrphans[];
  /** The StatefulSets scanned, as the cluster has them, by `namespace/name`. */
  objects: ReadonlyMap<string, V1StatefulSet>;
  /** Present when the answer came from a watch cache that is disconnected. */
  staleness?: ClusterStaleness;
  /** The watch cache the scan read, when it read one. */
  cache?: ClusterCache;
}

/**
 * Finds provably unused claims: lists the entity's StatefulSets in every
 * cluster, then per namespace every claim and pod (by name, not selector:
 * the StatefulSet controller copies only matchLabels onto claims), and
 * applies the orphan rule. Reads a cluster's watch cache once it is synced;
 * until then (or without one) reads live, and only the orphans' volumes one
 * by one. An entity's read starts its clusters' caches; the fleet's starts
 * none for a cluster the catalog locator found (anyone who writes a catalog
 * Resource could otherwise have the backend follow a cluster nobody reads).
 * With an annotator, every scan records its orphans as seen and adds their
 * first sightings and costs. `rule` holds the orphan rule's settings
 * (pvcPruner.pausedStatefulSets). With a lineage recorder, every scan
 * records what each claim of the StatefulSets it saw belongs to.
 */
export class OrphanFinder {
  private readonly cached: CachedClassifier;
  private readonly liveScans = new SharedInFlight<Scanned>();
  /** Each cache's StatefulSets by label, kept until one of them changes. */
  private readonly labelIndexes = new WeakMap<
    ClusterCache,
    { version: number; index: StatefulSetsByLabel }
  >();

  constructor(
    private readonly gateways: KubeGateways,
    private readonly caches?: ClusterCaches,
    private readonly annotator?: OrphanAnnotator,
    private readonly rule: { pausedStatefulSets: PausedStatefulSets } = {
      pausedStatefulSets: 'keep',
    },
    /** Tells an entity's card what a prune with snapshots would do with each orphan. */
    private readonly snapshotPlanner?: OrphanSnapshotPlanner,
    /** Records what each claim of every StatefulSet scanned belongs to. */
    private readonly lineage?: LineageRecorder,
  ) {
    this.cached = new CachedClassifier(rule.pausedStatefulSets);
  }

  /**
   * The located clusters an entity's workloads may be in: every one, or the
   * one it names. The caches of clusters no longer located are stopped.
   */
  async clustersOf(
    target: Pick<EntityWorkloadTarget, 'cluster'>,
  ): Promise<LocatedCluster[]> {
    const clusters = await this.gateways.list();
    this.caches?.retain(clusters);
    return clusters.filter(c => !target.cluster || c.name === target.cluster);
  }

  /**
   * `requestAuth` carries the user's tokens for clusters of client-side
   * providers. `admit` decides, for every StatefulSet found in every
   * cluster at once, whether it is shown and who else claims it: a
   * StatefulSet not shown is only counted, in its cluster's `withheld`.
   */
  async findForEntity(
    target: EntityWorkloadTarget,
    requestAuth: KubernetesRequestAuth = {},
    admit?: Admit,
  ): Promise<OrphansResponse> {
    const clusters = await this.clustersOf(target);
    const priced = this.annotator?.priced ?? false;
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
        totals: sumTotals([], priced),
        ...this.snapshotSettings(),
      };
    }
    const scanned = await Promise.all(
      clusters.map(async c =>
        this.annotated(await this.sectionOf(c, target, requestAuth)),
      ),
    );
    const admittedSections = admit
      ? await admitted(scanned, target.entityRef, admit)
      : scanned.map(s => s.section);
    const sections = await Promise.all(
      admittedSections.map(s =>
        this.withSnapshotPlans(s, clusters, requestAuth),
      ),
    );
    const found = sections.flatMap(s => (s.ok ? s.statefulSets : []));
    const pricing = this.annotator?.pricing(found);
    return {
      entityRef: target.entityRef,
      clusters: sections,
      totals: sumTotals(found.map(totalsOf), priced),
      ...(pricing ? { pricing } : {}),
      ...this.snapshotSettings(),
    };
  }

  /** `pvcPruner.snapshots` as an answer tells the card, when snapshots are planned at all. */
  snapshotSettings(): Pick<OrphansResponse, 'snapshots'> {
    return this.snapshotPlanner
      ? { snapshots: this.snapshotPlanner.settings }
      : {};
  }

  /** A shown section's orphans with their snapshot plans, the cluster read as the caller may. */
  private async withSnapshotPlans(
    section: ClusterOrphans,
    clusters: LocatedCluster[],
    requestAuth: KubernetesRequestAuth,
  ): Promise<ClusterOrphans> {
    const cluster = clusters.find(c => c.name === section.cluster);
    if (!this.snapshotPlanner || !section.ok || !cluster) return section;
    const gateway = this.gateways.forCluster(cluster, requestAuth);
    return {
      ...section,
      statefulSets: await this.snapshotPlanner.plan(
        gateway,
        section.statefulSets,
      ),
    };
  }

  /**
   * The StatefulSets of many entities in one cluster, each namespace's
   * claims and pods read once for all of them. Throws a ClusterRequestError
   * when the cluster cannot be read.
   */
  async scanCluster(
    details: LocatedCluster,
    targets: EntityWorkloadTarget[],
    options: {
      includeUnowned?: boolean;
      /** The caller's tokens, for a cluster of a client-side provider: it is read as they may read it. */
      requestAuth?: KubernetesRequestAuth;
      /**
       * Read the watch cache only, never the API server: throws a
       * ClusterRequestError when the cache is not synced, and finds nothing
       * for a selector the cache cannot evaluate.
       */
      cacheOnly?: boolean;
    } = {},
  ): Promise<ClusterScan> {
    const cluster = details.name;
    const gateway = this.gateways.forCluster(details, options.requestAuth);
    // A gateway acting for a user has no cache: what it reads is the user's to see, never shared.
    const cache = await this.caches?.whenReady(details, gateway, {
      start: details.locatorType !== 'catalog',
    });
    if (options.cacheOnly && !cache)
      throw new ClusterRequestError(
        cluster,
        `the watch cache of cluster "${cluster}" is not synced yet (or cannot be started for it), and this read answers from the cache only`,
      );
    const byLabel = cache && this.labelIndexOf(cache);
    // From the cache when it is synced and understands the selector; else from the API server.
    const statefulSetsOf = async (labelSelector: string, namespace?: string) =>
      byLabel?.matching(labelSelector, namespace) ??
      cache?.statefulSetsMatching(labelSelector, namespace) ??
      (options.cacheOnly
        ? []
        : gateway.listStatefulSets(labelSelector, namespace));
    const inCluster = targets.filter(t => !t.cluster || t.cluster === cluster);
    const listed = await mapLimited(inCluster, LIST_CONCURRENCY, t =>
      statefulSetsOf(t.labelSelector, t.namespace),
    );
    const mapped = new Map<string, V1StatefulSet>();
    for (const sts of listed.flat()) mapped.set(sts.metadata?.uid ?? '', sts);
    const unowned = options.includeUnowned
      ? (await statefulSetsOf('')).filter(
          sts => !mapped.has(sts.metadata?.uid ?? ''),
        )
      : [];
    const all = [...mapped.values(), ...unowned];
    // Unsorted from the cache: each entity's few are sorted below, not the whole cluster.
    let reports = cache
      ? all.map(sts => this.cached.classify(cache, sts))
      : await this.classify(gateway, all);
    if (cache) await this.recordCachedLineage(cluster, cache, all);
    if (this.annotator)
      reports = await this.annotator.annotate(cluster, reports);
    const byUid = new Map(reports.map(r => [r.uid, r]));
    const reportsOf = (list: V1StatefulSet[]) =>
      sorted(list.map(sts => byUid.get(sts.metadata?.uid ?? '')!));
    const staleness = cache?.staleness();
    return {
      cluster,
      byEntity: new Map(
        inCluster.map((t, i) => [t.entityRef, reportsOf(listed[i])]),
      ),
      unowned: reportsOf(unowned),
      objects: new Map(
        all.map(sts => [
          `${sts.metadata?.namespace}/${sts.metadata?.name}`,
          sts,
        ]),
      ),
      // Under a second is the gap between a list and its watch, not staleness.
      ...(staleness?.secondsSinceSync ? { staleness } : {}),
      ...(cache ? { cache } : {}),
    };
  }

  /**
   * One StatefulSet by name, read and classified live (and annotated when
   * the finder annotates); undefined when it does not exist.
   */
  async findStatefulSet(
    details: LocatedCluster,
    namespace: string,
    name: string,
    requestAuth: KubernetesRequestAuth = {},
  ): Promise<
    { statefulSet: V1StatefulSet; report: StatefulSetOrphans } | undefined
  > {
    const gateway = this.gateways.forCluster(details, requestAuth);
    let statefulSet: V1StatefulSet;
    try {
      statefulSet = await gateway.readStatefulSet(namespace, name);
    } catch (e) {
      if (e instanceof ClusterRequestError && e.statusCode === 404)
        return undefined;
      throw e;
    }
    let [report] = await this.classify(gateway, [statefulSet]);
    if (this.annotator)
      [report] = await this.annotator.annotate(details.name, [report]);
    if (this.snapshotPlanner)
      [report] = await this.snapshotPlanner.plan(gateway, [report]);
    return { statefulSet, report };
  }

  private labelIndexOf(cache: ClusterCache): StatefulSetsByLabel {
    const version = cache.statefulSets.version;
    const kept = this.labelIndexes.get(cache);
    if (kept?.version === version) return kept.index;
    const index = statefulSetsByLabel(cache);
    this.labelIndexes.set(cache, { version, index });
    return index;
  }

  private async sectionOf(
    cluster: LocatedCluster,
    target: EntityWorkloadTarget,
    requestAuth: KubernetesRequestAuth,
  ): Promise<Scanned> {
    try {
      const gateway = this.gateways.forCluster(cluster, requestAuth);
      const cache = await this.caches?.whenReady(cluster, gateway);
      const cached = cache?.statefulSetsMatching(
        target.labelSelector,
        target.namespace,
      );
      if (cache && cached) {
        await this.recordCachedLineage(cluster.name, cache, cached);
        const staleness = cache.staleness();
        return {
          section: {
            cluster: cluster.name,
            ok: true,
            statefulSets: this.classifyCached(cache, cached),
            // Under a second is the gap between a list and its watch, not staleness.
            ...(staleness?.secondsSinceSync ? { staleness } : {}),
          },
          objects: cached,
        };
      }
      const scan = async (): Promise<Scanned> => {
        const objects = await gateway.listStatefulSets(
          target.labelSelector,
          target.namespace,
        );
        return {
          section: {
            cluster: cluster.name,
            ok: true,
            statefulSets: await this.classify(gateway, objects),
          },
          objects,
        };
      };
      // One user's scan is never shared with another's: each sees what their own token may.
      if (gateway.actsForUser) return await scan();
      return await this.liveScans.run(
        `${cluster.identity}\n${target.labelSelector}\n${
          target.namespace ?? ''
        }`,
        scan,
      );
    } catch (e) {
      return { section: errorSection(cluster.name, e), objects: [] };
    }
  }

  /** A section with first sightings recorded and costs added, when the finder annotates. */
  private async annotated(scanned: Scanned): Promise<Scanned> {
    const { section } = scanned;
    if (!this.annotator || !section.ok) return scanned;
    return {
      ...scanned,
      section: {
        ...section,
        statefulSets: await this.annotator.annotate(
          section.cluster,
          section.statefulSets,
        ),
      },
    };
  }

  /** Classifies the claims of StatefulSets, reading each namespace's claims, pods and autoscalers once. */
  async classify(
    gateway: KubeGateway,
    statefulSets: V1StatefulSet[],
  ): Promise<StatefulSetOrphans[]> {
    const namespaces = [
      ...new Set(statefulSets.map(s => s.metadata?.namespace ?? '')),
    ];
    const read = new Map(
      await Promise.all(
        namespaces.map(async ns => {
          const [claims, pods, autoscalers, neighbours] = await Promise.all([
            gateway.listClaims(ns, claimAsTheRuleReadsIt),
            gateway.listPods(ns, podAsTheRuleReadsIt),
            readAutoscalers(gateway, ns),
            // Every StatefulSet of the namespace, not only the entity's: a claim whose name fits two is kept.
            gateway.listStatefulSets('', ns),
          ]);
          const snapshot = NamespaceSnapshot.of(ns, claims, pods, neighbours);
          return [ns, { snapshot, autoscalers }] as const;
        }),
      ),
    );
    await this.lineage?.saw(
      gateway.cluster,
      statefulSets.map(statefulSet => ({
        statefulSet,
        snapshot: read.get(statefulSet.metadata?.namespace ?? '')!.snapshot,
      })),
    );
    const firstPass = statefulSets.map(sts => {
      const { snapshot, autoscalers } = read.get(
        sts.metadata?.namespace ?? '',
      )!;
      return classifyInSnapshot(sts, snapshot, new Map(), {
        autoscalers,
        pausedStatefulSets: this.rule.pausedStatefulSets,
      });
    });
    const volumeNames = [
      ...new Set(
        firstPass.flatMap(r =>
          r.orphans.flatMap(o => (o.volume ? [o.volume.name] : [])),
        ),
      ),
    ];
    const volumes = new Map<string, V1PersistentVolume>();
    const pvs = await mapLimited(volumeNames, VOLUME_READ_CONCURRENCY, name =>
      gateway.readVolume(name),
    );
    pvs.forEach((pv, i) => pv && volumes.set(volumeNames[i], pv));
    return sorted(firstPass.map(report => withVolumes(report, volumes)));
  }

  /** Records the lineage of the claims of StatefulSets read from a watch cache, as its namespaces are there. */
  private async recordCachedLineage(
    cluster: string,
    cache: ClusterCache,
    statefulSets: V1StatefulSet[],
  ): Promise<void> {
    if (!this.lineage) return;
    await this.lineage.saw(
      cluster,
      statefulSets.map(statefulSet => ({
        statefulSet,
        snapshot: this.cached.snapshotOf(
          cache,
          statefulSet.metadata?.namespace ?? '',
        ),
      })),
    );
  }

  /** The same classification from a synced watch cache: no request to the cluster. */
  private classifyCached(
    cache: ClusterCache,
    statefulSets: V1StatefulSet[],
  ): StatefulSetOrphans[] {
    return sorted(statefulSets.map(sts => this.cached.classify(cache, sts)));
  }
}

/**
 * The cache's StatefulSets indexed by each label they carry, built in one
 * pass, so that a scan of a thousand entities finds each one's StatefulSets
 * by lookup instead of matching every selector against every StatefulSet.
 * Answers undefined for selectors of any other shape.
 */
type StatefulSetsByLabel = ReturnType<typeof statefulSetsByLabel>;

function statefulSetsByLabel(cache: ClusterCache) {
  const index = new Map<string, V1StatefulSet[]>();
  for (const sts of cache.statefulSetsMatching('') ?? []) {
    for (const [key, value] of Object.entries(sts.metadata?.labels ?? {})) {
      const k = `${key}=${value}`;
      const list = index.get(k);
      if (list) list.push(sts);
      else index.set(k, [sts]);
    }
  }
  // Each selector parsed once for all scans of this index: the entities' selectors repeat every request.
  const keys = new Map<string, string | undefined>();
  const keyOf = (labelSelector: string) => {
    if (keys.has(labelSelector)) return keys.get(labelSelector);
    const key = singleEqualityOf(labelSelector);
    keys.set(labelSelector, key);
    return key;
  };
  return {
    matching(labelSelector: string, namespace?: string) {
      const key = keyOf(labelSelector);
      if (key === undefined) return undefined;
      const found = index.get(key) ?? [];
      return namespace
        ? found.filter(sts => sts.metadata?.namespace === namespace)
        : found;
    },
  };
}

function sorted(reports: StatefulSetOrphans[]): StatefulSetOrphans[] {
  return reports.sort(
    (a, b) =>
      a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name),
  );
}
