import {
  AuthService,
  BackstageCredentials,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import {
  CATALOG_FILTER_EXISTS,
  EntityFilterQuery,
} from '@backstage/catalog-client';
import {
  Entity,
  parseEntityRef,
  stringifyEntityRef,
} from '@backstage/catalog-model';
import { InputError } from '@backstage/errors';
import { CatalogService } from '@backstage/plugin-catalog-node';
import {
  KUBERNETES_ANNOTATION,
  KUBERNETES_LABEL_SELECTOR_QUERY_ANNOTATION,
  type KubernetesRequestAuth,
} from '@backstage/plugin-kubernetes-common';
import {
  FleetCluster,
  FleetEntity,
  FleetResponse,
  FleetStatefulSet,
  pvcPrunerFleetUnownedReadPermission,
  pvcPrunerOrphansReadPermission,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import {
  errorSection,
  ClusterScan,
  EntityWorkloadTarget,
  firstSeenOf,
  OrphanAnnotator,
  OrphanFinder,
  sumTotals,
  totalsOf,
  workloadTargetOf,
} from '../orphans';
import { authorizeEntities } from '../permissions';
import { decodePageCursor, encodePageCursor } from '../pageCursor';

/** The filters and page of `GET /v1/fleet`, shape-checked by the router. */
export interface FleetQuery {
  cluster?: string;
  namespace?: string;
  owner?: string;
  limit: number;
  cursor?: string;
}

/** Entities Backstage's Kubernetes plugin would map to workloads: either annotation. */
const KUBERNETES_ENTITIES: EntityFilterQuery = [
  {
    [`metadata.annotations.${KUBERNETES_ANNOTATION}`]: CATALOG_FILTER_EXISTS,
  },
  {
    [`metadata.annotations.${KUBERNETES_LABEL_SELECTOR_QUERY_ANNOTATION}`]:
      CATALOG_FILTER_EXISTS,
  },
];
/** What locates an entity's workloads: its ref and its annotations. */
const WORKLOAD_FIELDS = [
  'kind',
  'metadata.name',
  'metadata.namespace',
  'metadata.annotations',
];
/** The caller's entities are rows too: their title and owner. */
const ENTITY_FIELDS = [...WORKLOAD_FIELDS, 'metadata.title', 'spec.owner'];

interface FleetTarget extends EntityWorkloadTarget {
  owner?: string;
}

function ownerOf(entity: Entity): string | undefined {
  const owner = entity.spec?.owner;
  if (typeof owner !== 'string' || !owner) return undefined;
  try {
    return stringifyEntityRef(
      parseEntityRef(owner, {
        defaultKind: 'group',
        defaultNamespace: entity.metadata.namespace ?? 'default',
      }),
    );
  } catch {
    return undefined;
  }
}

/** The entity's target, or undefined when its annotations are empty (the filter only asks that they exist). */
function workloadsOf(entity: Entity): EntityWorkloadTarget | undefined {
  try {
    return workloadTargetOf(entity);
  } catch {
    return undefined;
  }
}

/** The entity's target with its owner, for a row of the answer. */
function targetOf(entity: Entity): FleetTarget | undefined {
  const target = workloadsOf(entity);
  return target && { ...target, owner: ownerOf(entity) };
}

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

/**
 * What every entity the caller may read could reclaim, across clusters, for
 * the fleet page and `GET /v1/fleet`. The entities come from the catalog
 * asked with the caller's credentials, then `pvc-pruner.orphans.read` is
 * authorized for all of them in one batch: an entity the caller may not
 * read is in no row and no total. StatefulSets no entity in the whole
 * catalog maps to are "unowned", shown only with
 * `pvc-pruner.fleet.unowned.read`. Clusters of client-side providers are
 * read with the caller's own token (`requestAuth`), never the plugin's: a
 * caller without one gets that cluster as failed, asking them to sign in.
 */
export class FleetService {
  constructor(
    private readonly deps: {
      catalog: CatalogService;
      auth: AuthService;
      permissions: PermissionsService;
      orphanFinder: OrphanFinder;
      annotator: OrphanAnnotator;
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
      this.kubernetesEntities(credentials, ENTITY_FIELDS, targetOf),
      // Unowned means no entity of the whole catalog maps to it, not just none this caller sees.
      owner || after
        ? undefined
        : this.deps.auth
            .getOwnServiceCredentials()
            .then(service =>
              this.kubernetesEntities(service, WORKLOAD_FIELDS, workloadsOf),
            ),
    ]);
    const { allowed, basic } = await authorizeEntities({
      permissions: this.deps.permissions,
      permission: pvcPrunerOrphansReadPermission,
      entityRefs: visible.map(t => t.entityRef),
      basic: [pvcPrunerFleetUnownedReadPermission],
      credentials,
    });
    const readable = visible.filter(
      t => allowed.has(t.entityRef) && (!owner || t.owner === owner),
    );
    const withUnowned = basic[0] && everything !== undefined;
    const mapped = withUnowned ? everything : readable;

    const clusters = query.cluster
      ? configured.filter(c => c.name === query.cluster)
      : configured;
    const scans = await Promise.all(
      clusters.map(async cluster => {
        try {
          return await orphanFinder.scanCluster(cluster, mapped, {
            includeUnowned: withUnowned,
            requestAuth,
          });
        } catch (e) {
          return errorSection(cluster.name, e);
        }
      }),
    );
    const answered = scans.filter((s): s is ClusterScan => !('ok' in s));
    // The raw reports of what is shown, for the pricing summary: nothing of an entity not shown.
    const shown: StatefulSetOrphans[] = [];
    const keep = (cluster: string, list: StatefulSetOrphans[]) =>
      list
        .filter(
          sts =>
            sts.orphans.length > 0 &&
            (!query.namespace || sts.namespace === query.namespace),
        )
        .map((sts): FleetStatefulSet => {
          shown.push(sts);
          return {
            cluster,
            namespace: sts.namespace,
            name: sts.name,
            ...totalsOf(sts),
            ...(sts.firstSeenOrphanedAt
              ? { firstSeenOrphanedAt: sts.firstSeenOrphanedAt }
              : {}),
          };
        });

    const priced = annotator.priced;
    const entities: FleetEntity[] = [];
    for (const target of readable) {
      const statefulSets = answered
        .flatMap(scan =>
          keep(scan.cluster, scan.byEntity.get(target.entityRef) ?? []),
        )
        .sort(byPlace);
      if (statefulSets.length === 0) continue;
      entities.push({
        entityRef: target.entityRef,
        ...(target.entity.metadata.title
          ? { title: target.entity.metadata.title }
          : {}),
        ...(target.owner ? { owner: target.owner } : {}),
        statefulSets,
        totals: sumTotals(statefulSets, priced),
        ...firstSeenOf(statefulSets),
      });
    }
    entities.sort((a, b) => (a.entityRef < b.entityRef ? -1 : 1));
    const start = after ? entities.findIndex(e => e.entityRef > after) : 0;
    const page = start < 0 ? [] : entities.slice(start, start + query.limit);
    const more = start >= 0 && start + query.limit < entities.length;

    const unowned = withUnowned
      ? answered.flatMap(scan => keep(scan.cluster, scan.unowned)).sort(byPlace)
      : undefined;
    const pricing = annotator.pricing(shown);
    const owners = new Map<string | undefined, FleetEntity[]>();
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
    return {
      clusters: clusterStates,
      entitiesScanned: readable.length,
      totals: {
        entities: entities.length,
        statefulSets: entities.reduce((n, e) => n + e.statefulSets.length, 0),
        ...sumTotals(
          entities.map(e => e.totals),
          priced,
        ),
      },
      owners: [...owners]
        .sort(([a], [b]) => byOwnerRef(a, b))
        .map(([ref, owned]) => ({
          ...(ref ? { owner: ref } : {}),
          entities: owned.length,
          totals: sumTotals(
            owned.map(e => e.totals),
            priced,
          ),
          ...firstSeenOf(owned),
        })),
      items: page,
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
            },
          }
        : {}),
      ...(pricing ? { pricing } : {}),
    };
  }

  /** The catalog's entities with Kubernetes annotations, as these credentials may see them, with only `fields` read. */
  private async kubernetesEntities<T>(
    credentials: BackstageCredentials,
    fields: string[],
    toTarget: (entity: Entity) => T | undefined,
  ): Promise<T[]> {
    const { items } = await this.deps.catalog.getEntities(
      { filter: KUBERNETES_ENTITIES, fields },
      { credentials },
    );
    return items.flatMap(entity => toTarget(entity) ?? []);
  }
}
