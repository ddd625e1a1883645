import type { AuthService, LoggerService } from '@backstage/backend-plugin-api';
import {
  CATALOG_FILTER_EXISTS,
  EntityFilterQuery,
} from '@backstage/catalog-client';
import { ServiceUnavailableError } from '@backstage/errors';
import { CatalogService } from '@backstage/plugin-catalog-node';
import {
  KUBERNETES_ANNOTATION,
  KUBERNETES_LABEL_SELECTOR_QUERY_ANNOTATION,
} from '@backstage/plugin-kubernetes-common';
import { ClaimantIndex } from './ClaimantIndex';
import { workloadEntityOf } from './WorkloadEntity';

/** Entities Backstage's Kubernetes plugin would map to workloads: either annotation. */
export const KUBERNETES_ENTITIES: EntityFilterQuery = [
  {
    [`metadata.annotations.${KUBERNETES_ANNOTATION}`]: CATALOG_FILTER_EXISTS,
  },
  {
    [`metadata.annotations.${KUBERNETES_LABEL_SELECTOR_QUERY_ANNOTATION}`]:
      CATALOG_FILTER_EXISTS,
  },
];

/** What locates an entity's workloads: its ref and its annotations. */
export const WORKLOAD_FIELDS = [
  'kind',
  'metadata.name',
  'metadata.namespace',
  'metadata.annotations',
];

export interface WorkloadCatalogOptions {
  /** A read older than this is refreshed in the background while it is still used. */
  maxAgeMs: number;
  /** A read older than this is not used: the caller waits for a new one. */
  maxStaleMs: number;
}

/**
 * Every catalog entity with Kubernetes annotations, read with the plugin's
 * own credentials (so entities hidden from the caller still count), as a
 * {@link ClaimantIndex}. Kept warm for reads, where a claimant added a few
 * seconds ago may be missed for as long; a prune job reads it afresh.
 */
export class WorkloadCatalog {
  private last?: { index: ClaimantIndex; readAt: number };
  private refreshing?: Promise<ClaimantIndex>;
  /** Entities whose unreadable selector was already logged. */
  private readonly warned = new Set<string>();

  constructor(
    private readonly deps: {
      catalog: CatalogService;
      auth: AuthService;
      logger: LoggerService;
    },
    private readonly options: WorkloadCatalogOptions = {
      maxAgeMs: 10_000,
      maxStaleMs: 60_000,
    },
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A read no older than `maxStaleMs`, refreshed in the background once older than `maxAgeMs`. */
  async warm(): Promise<ClaimantIndex> {
    const last = this.last;
    const age = last ? this.now() - last.readAt : Infinity;
    if (last && age <= this.options.maxAgeMs) return last.index;
    this.refreshing ??= this.read().finally(() => {
      this.refreshing = undefined;
    });
    if (last && age <= this.options.maxStaleMs) {
      // A failed refresh is logged; the next request past maxStaleMs says why.
      this.refreshing.catch(e =>
        this.deps.logger.warn(`pvc-pruner: reading the catalog failed: ${e}`),
      );
      return last.index;
    }
    return this.refreshing;
  }

  /** A read that starts now: what a prune job checks its claimants against. */
  fresh(): Promise<ClaimantIndex> {
    return this.read();
  }

  private async read(): Promise<ClaimantIndex> {
    const readAt = this.now();
    let items;
    try {
      const credentials = await this.deps.auth.getOwnServiceCredentials();
      ({ items } = await this.deps.catalog.getEntities(
        {
          filter: KUBERNETES_ENTITIES,
          fields: [...WORKLOAD_FIELDS, 'metadata.uid', 'spec.owner'],
        },
        { credentials },
      ));
    } catch (e) {
      throw new ServiceUnavailableError(
        `pvc-pruner could not read the catalog to find which entities claim each StatefulSet: ${
          (e as Error).message
        }`,
      );
    }
    const index = new ClaimantIndex(
      items.flatMap(entity => workloadEntityOf(entity) ?? []),
      entity => {
        if (this.warned.has(entity.entityRef)) return;
        // Bounded: a catalog that churns through such entities is warned about afresh.
        if (this.warned.size >= 10_000) this.warned.clear();
        this.warned.add(entity.entityRef);
        this.deps.logger.warn(
          `pvc-pruner: the label selector "${entity.labelSelector}" of ${entity.entityRef} cannot be read, so it is taken to claim every StatefulSet in its scope`,
        );
      },
    );
    if (!this.last || this.last.readAt <= readAt) this.last = { index, readAt };
    return index;
  }
}
