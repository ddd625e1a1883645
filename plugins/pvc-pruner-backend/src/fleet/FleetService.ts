import {
  BackstageCredentials,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import {
  Entity,
  parseEntityRef,
  stringifyEntityRef,
} from '@backstage/catalog-model';
import { InputError } from '@backstage/errors';
import { CatalogService } from '@backstage/plugin-catalog-node';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import {
  FleetAutoPrune,
  FleetCluster,
  FleetEntity,
  FleetResponse,
  FleetStatefulSet,
  pvcPrunerFleetUnownedReadPermission,
  pvcPrunerOrphansReadPermission,
  pvcPrunerUnownedPrunePermission,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import {
  errorSection,
  ClusterScan,
  firstSeenOf,
  OrphanAnnotator,
  OrphanFinder,
  sumTotals,
  totalsOf,
} from '../orphans';
import {
  KUBERNETES_ENTITIES,
  OwnershipChecks,
  WORKLOAD_FIELDS,
  WorkloadCatalog,
  workloadEntityOf,
  WorkloadEntity,
} from '../ownership';
import { authorizeEntities } from '../permissions';
import { decodePageCursor, encodePageCursor } from '../pageCursor';
import { countedOnce, FleetRow } from './countedOnce';
import type { KeptSnapshotTotals } from '../snapshots/KeptSnapshotTotals';
import {
  fleetLeftBehind,
  totalsOnce,
  type FleetLeftBehindReader,
} from '../leftBehind/FleetLeftBehind';

/** The filters and page of `GET /v1/fleet`, shape-checked by the router. */
export interface FleetQuery {
  cluster?: string;
  namespace?: string;
  owner?: string;
  limit: number;
  cursor?: string;
}

/** The caller's entities are rows too: their title and owner. */
const ENTITY_FIELDS = [...WORKLOAD_FIELDS, 'metadata.title', 'spec.owner'];

function parseOwner(owner: string): string {
  try {
    return stringifyEntityRef(
      parseEntityRef(owner, {
        defaultKind: 'group',
        defaultNamespace: 'default',
      }),
    );
  } catch (e) {
    throw new InputError(
      `Invalid owner "${owner}": ${
        (e as Error).message
      }; use an entity ref such as group:default/checkout`,
    );
  }
}

/** Owner refs in order, entities without an owner last. */
function byOwnerRef(a: string | undefined, b: string | undefined) {
  if (a === b) return 0;
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  return a < b ? -1 : 1;
}

const byPlace = (a: FleetStatefulSet, b: FleetStatefulSet) =>
  a.cluster.localeCompare(b.cluster) ||
  a.namespace.localeCompare(b.namespace) ||
  a.name.localeCompare(b.name);

function rowOf(cluster: string, sts: StatefulSetOrphans): FleetStatefulSet {
  return {
    cluster,
    namespace: sts.namespace,
    name: sts.name,
    ...totalsOf(sts),
    ...(sts.firstSeenOrphanedAt
      ? { firstSeenOrphanedAt: sts.firstSeenOrphanedAt }
      : {}),
  };
}

/** A StatefulSet with orphans listed under an entity, before its claimants are checked. */
interface Candidate {
  scan: ClusterScan;
  report: StatefulSetOrphans;
}

/** A StatefulSet's key across the fleet: cluster, namespace and name. */
const keyOf = (scan: ClusterScan, report: StatefulSetOrphans) =>
  `${scan.cluster}\n${report.namespace}/${report.name}`;

/**
 * What every entity the caller may read could reclaim, across clusters, for
 * the fleet page and `GET /v1/fleet`. The entities come from the catalog
 * asked with the caller's credentials, then `pvc-pruner.orphans.read` is
 * authorized for all of them in one batch: an entity the caller may not
 * read is in no row and no total. A StatefulSet is listed under each of its
 * claimants the caller may read, only when they may read every one of its
 * claimants, and counted once in every total. StatefulSets no entity in the
 * whole catalog claims are "unowned", shown only with
 * `pvc-pruner.fleet.unowned.read`. Clusters of client-side providers are
 * read with the caller's own token (`requestAuth`), never the plugin's: a
 * caller without one gets that cluster as failed, asking them to sign in.
 */
export class FleetService {
  constructor(
    private readonly deps: {
      catalog: CatalogService;
      permissions: PermissionsService;
      orphanFinder: OrphanFinder;
      annotator: OrphanAnnotator;
      workloads: WorkloadCatalog;
      ownership: OwnershipChecks;
      /** The kept snapshots of the listed StatefulSets, for `totals.snapshots`. */
      snapshots?: KeptSnapshotTotals;
      /** The claims deleted StatefulSets left, a kind of their own beside the orphans. */
      leftBehind?: Pick<FleetLeftBehindReader, 'read'>;
      /** Automatic pruning's state, last run and next (`autoPrune`). */
      autoPrune?: () => Promise<FleetAutoPrune>;
    },
  ) {}

  async list(
    query: FleetQuery,
    credentials: BackstageCredentials,
    requestAuth: KubernetesRequestAuth = {},
  ): Promise<FleetResponse> {
    const { orphanFinder, annotator } = this.deps;
    const configured = await orphanFinder.clustersOf({});
    const names = configured.map(c => c.name);
    if (query.cluster !== undefined && !names.includes(query.cluster))
      throw new InputError(
        `Unknown cluster "${query.cluster}": the configured clusters are ${
          names.map(c => `"${c}"`).join(', ') || 'none'
        }`,
      );
    const owner =
      query.owner === undefined ? undefined : parseOwner(query.owner);
    const after = query.cursor
      ? decodePageCursor(query.cursor, ['after']).after
      : undefined;

    const [visible, everything] = await Promise.all([
      this.visibleEntities(credentials),
      // Unowned means no entity of the whole catalog claims it, not just none this caller sees.
      this.deps.workloads.warm(),
    ]);
    const { allowed, basic } = await authorizeEntities({
      permissions: this.deps.permissions,
      permission: pvcPrunerOrphansReadPermission,
      entityRefs: visible.map(t => t.entityRef),
      basic: [
        pvcPrunerFleetUnownedReadPermission,
        pvcPrunerUnownedPrunePermission,
      ],
      credentials,
    });
    const [unownedRead, unownedPrune] = basic;
    const readable = visible.filter(
      t => allowed.has(t.entityRef) && (!owner || t.owner === owner),
    );
    const withUnowned = unownedRead && !owner && !after;
    const mapped = withUnowned ? everything.entities : readable;

    const clusters = query.cluster
      ? configured.filter(c => c.name === query.cluster)
      : configured;
    // Read beside the scans: one cached cluster-wide list per cluster.
    const snapshotReads = this.deps.snapshots?.read(clusters, requestAuth);
    const leftBehindRead = this.deps.leftBehind?.read({
      clusters,
      requestAuth,
      credentials,
      readable: new Set(readable.map(t => t.entityRef)),
      namespace: query.namespace,
    });
    const scans = await Promise.all(
      clusters.map(async cluster => {
        try {
          return await orphanFinder.scanCluster(cluster, [...mapped], {
            includeUnowned: withUnowned,
            requestAuth,
          });
        } catch (e) {
          return errorSection(cluster.name, e);
        }
      }),
    );
    const answered = scans.filter((s): s is ClusterScan => !('ok' in s));
    const inQuery = (sts: StatefulSetOrphans) =>
      sts.orphans.length > 0 &&
      (!query.namespace || sts.namespace === query.namespace);

    const rows = await this.readableRows(
      credentials,
      allowed,
      readable,
      answered,
      inQuery,
    );

    const priced = annotator.priced;
    const leftBehind = await leftBehindRead;
    const leftBehindOf = (entityRef: string) =>
      leftBehind?.byEntity.get(entityRef) ?? [];
    const byEntity = new Map<string, FleetRow[]>();
    for (const [entityRef, row] of rows) {
      const list = byEntity.get(entityRef) ?? [];
      list.push(row);
      byEntity.set(entityRef, list);
    }
    const entities: Array<FleetEntity & { rows: FleetRow[] }> = readable
      .filter(
        t => byEntity.has(t.entityRef) || leftBehindOf(t.entityRef).length > 0,
      )
      .map(target => {
        const entityRows = byEntity.get(target.entityRef) ?? [];
        const left = leftBehindOf(target.entityRef);
        const statefulSets = entityRows.map(r => r.row).sort(byPlace);
        return {
          entityRef: target.entityRef,
          ...(target.entity.metadata.title
            ? { title: target.entity.metadata.title }
            : {}),
          ...(target.owner ? { owner: target.owner } : {}),
          statefulSets,
          totals: sumTotals(statefulSets, priced),
          ...firstSeenOf(statefulSets),
          ...(left.length ? { leftBehind: fleetLeftBehind(left, priced) } : {}),
          rows: entityRows,
        };
      })
      .sort((a, b) => (a.entityRef < b.entityRef ? -1 : 1));
    const start = after ? entities.findIndex(e => e.entityRef > after) : 0;
    const page = start < 0 ? [] : entities.slice(start, start + query.limit);
    const more = start >= 0 && start + query.limit < entities.length;

    const unowned = withUnowned
      ? answered
          .flatMap(scan =>
            scan.unowned.filter(inQuery).map(sts => rowOf(scan.cluster, sts)),
          )
          .sort(byPlace)
      : undefined;
    // The raw reports of what is shown, for the pricing summary: nothing of an entity not shown.
    const shownReports = [
      ...new Map(rows.map(([, r]) => [r.key, r.report] as const)).values(),
      ...answered.flatMap(scan =>
        withUnowned ? scan.unowned.filter(inQuery) : [],
      ),
    ];
    const pricing = annotator.pricing(shownReports);
    const owners = new Map<string | undefined, typeof entities>();
    for (const e of entities) {
      const owned = owners.get(e.owner);
      if (owned) owned.push(e);
      else owners.set(e.owner, [e]);
    }
    const clusterStates = scans.map(
      (s): FleetCluster =>
        'ok' in s
          ? s
          : {
              cluster: s.cluster,
              ok: true,
              ...(s.staleness ? { staleness: s.staleness } : {}),
            },
    );
    const overall = countedOnce(
      entities.flatMap(e => e.rows),
      priced,
    );
    const leftBehindOnce = (owned: typeof entities) => {
      const left = owned.flatMap(e => leftBehindOf(e.entityRef));
      return left.length ? { leftBehind: totalsOnce(left, priced) } : {};
    };
    const autoPrune = await this.deps.autoPrune?.();
    const snapshots =
      snapshotReads &&
      (await this.deps.snapshots!.totals(
        snapshotReads,
        entities.flatMap(e => e.rows.map(r => r.row)),
      ));
    return {
      clusters: clusterStates,
      entitiesScanned: readable.length,
      totals: {
        entities: entities.length,
        statefulSets: overall.statefulSets,
        ...overall.totals,
        ...leftBehindOnce(entities),
        ...(snapshots ? { snapshots } : {}),
      },
      owners: [...owners]
        .sort(([a], [b]) => byOwnerRef(a, b))
        .map(([ref, owned]) => {
          const once = countedOnce(
            owned.flatMap(e => e.rows),
            priced,
          );
          return {
            ...(ref ? { owner: ref } : {}),
            entities: owned.length,
            totals: once.totals,
            ...leftBehindOnce(owned),
            ...(once.firstSeenOrphanedAt
              ? { firstSeenOrphanedAt: once.firstSeenOrphanedAt }
              : {}),
          };
        }),
      items: page.map(({ rows: _rows, ...entity }) => entity),
      ...(more
        ? {
            nextCursor: encodePageCursor({
              after: page[page.length - 1].entityRef,
            }),
          }
        : {}),
      ...(unowned
        ? {
            unowned: {
              statefulSets: unowned,
              totals: sumTotals(unowned, priced),
              ...firstSeenOf(unowned),
              ...(leftBehind?.unclaimed.length
                ? { leftBehind: fleetLeftBehind(leftBehind.unclaimed, priced) }
                : {}),
              prunable: unownedPrune,
            },
          }
        : {}),
      ...(pricing ? { pricing } : {}),
      ...(autoPrune ? { autoPrune } : {}),
    };
  }

  /**
   * The rows of the readable entities' StatefulSets whose every claimant the
   * caller may read (one batch for all), each with the others that claim
   * it, by the entity it is listed under. Who claims a StatefulSet is asked
   * once per StatefulSet, however many entities list it.
   */
  private async readableRows(
    credentials: BackstageCredentials,
    allowed: ReadonlySet<string>,
    readable: WorkloadEntity[],
    scans: ClusterScan[],
    inQuery: (sts: StatefulSetOrphans) => boolean,
  ): Promise<Array<[string, FleetRow & { report: StatefulSetOrphans }]>> {
    const listed = (each: (entity: WorkloadEntity, c: Candidate) => void) => {
      for (const entity of readable)
        for (const scan of scans)
          for (const report of scan.byEntity.get(entity.entityRef) ?? [])
            if (inQuery(report)) each(entity, { scan, report });
    };
    const unique = new Map<string, Candidate>();
    listed((_, c) => {
      const key = keyOf(c.scan, c.report);
      if (!unique.has(key)) unique.set(key, c);
    });
    const keys = [...unique.keys()].filter(key => {
      const { scan, report } = unique.get(key)!;
      return scan.objects.has(`${report.namespace}/${report.name}`);
    });
    const verdicts = await this.deps.ownership.readable(
      credentials,
      keys.map(key => {
        const { scan, report } = unique.get(key)!;
        return {
          cluster: scan.cluster,
          statefulSet: scan.objects.get(`${report.namespace}/${report.name}`)!,
        };
      }),
      { readable: allowed },
    );
    const verdictOf = new Map(keys.map((key, i) => [key, verdicts[i]]));
    const rows: Array<[string, FleetRow & { report: StatefulSetOrphans }]> = [];
    listed((entity, { scan, report }) => {
      const key = keyOf(scan, report);
      const verdict = verdictOf.get(key);
      if (!verdict || verdict.refused.length > 0) return;
      const sharedWith = verdict.claimants.filter(
        ref => ref !== entity.entityRef,
      );
      const row = rowOf(scan.cluster, report);
      rows.push([
        entity.entityRef,
        {
          key,
          report,
          row: sharedWith.length > 0 ? { ...row, sharedWith } : row,
        },
      ]);
    });
    return rows;
  }

  /** The catalog's entities with Kubernetes annotations that the caller may see. */
  private async visibleEntities(
    credentials: BackstageCredentials,
  ): Promise<WorkloadEntity[]> {
    const { items } = await this.deps.catalog.getEntities(
      { filter: KUBERNETES_ENTITIES, fields: ENTITY_FIELDS },
      { credentials },
    );
    return items.flatMap((entity: Entity) => workloadEntityOf(entity) ?? []);
  }
}
