/**
 * The catalog side of a scenario: the entities it registers, written to a
 * file the replicas load as a catalog location (as the demo writes
 * warehouse-cluster.yaml), refreshed through the catalog's refresh endpoint,
 * and waited for until every replica's catalog serves exactly them; then
 * removed the same way. What the catalog held, and since when, is what the
 * oracle judges ownership by.
 */
import { writeFileSync } from 'node:fs';
import { historyNow } from 'kube-sim';
import { AUTO_PRUNE_ANNOTATION } from 'backstage-plugin-pvc-pruner-common';
import {
  CatalogEntity,
  CLUSTER_ANNOTATION,
  KUBERNETES_ID,
  LABEL_SELECTOR,
  NAMESPACE_ANNOTATION,
  ownerRef,
} from './ownership';
import { EntityPlan } from './scenario';

/** Marks the campaign's entities, so that they are found (and only they are removed). */
const CAMPAIGN_ANNOTATION = 'pvc-pruner.campaign/scenario';
/** Always in the file: refreshing it re-reads the file (the catalog refreshes an entity's location with it). */
const ANCHOR = 'component:default/campaign-anchor';
const SYNC_TIMEOUT_MS = 60_000;
const REFRESH_EVERY_MS = 2000;
const FIELDS =
  'kind,metadata.name,metadata.namespace,metadata.uid,metadata.annotations,spec.owner';
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

interface ServedEntity {
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    annotations?: Record<string, string>;
  };
  spec?: { owner?: string };
}

function component(
  name: string,
  owner: string,
  annotations: Record<string, string>,
) {
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Component',
    // A uid, as the catalog gives every entity: pvc-pruner checks recorded claimants by it.
    metadata: { name, uid: `uid-${name}`, annotations },
    spec: { type: 'service', lifecycle: 'experimental', owner },
  };
}

const refOf = (e: ServedEntity) =>
  `${e.kind.toLowerCase()}:${e.metadata.namespace ?? 'default'}/${
    e.metadata.name
  }`;

/** The catalog entity of a plan, as the oracle reads it. */
export function catalogEntityOf(
  plan: EntityPlan,
  visibleAt: number,
  writtenAt?: number,
): CatalogEntity {
  return {
    ref: `component:default/${plan.name}`,
    owner: ownerRef(plan.owner),
    annotations: plan.annotations,
    visibleAt,
    ...(writtenAt !== undefined ? { writtenAt } : {}),
  };
}

export class CampaignCatalog {
  /** What the file holds now. */
  private current: EntityPlan[] = [];

  constructor(
    /** The file every replica loads as a catalog location. */
    readonly path: string,
    private readonly replicaUrls: () => string[],
    private readonly token: string,
  ) {}

  /** Whether the file holds entities of a scenario (or a failed change left them). */
  get holdsAny(): boolean {
    return this.current.length > 0;
  }

  /** The file, with nothing of a scenario yet: written before the replicas start. */
  static writeEmpty(path: string) {
    writeFileSync(path, CampaignCatalog.contents([]));
  }

  private static contents(entities: EntityPlan[]) {
    // JSON is YAML: one document per entity.
    return [
      component(ANCHOR.split('/')[1], 'group:default/checkout', {
        [CAMPAIGN_ANNOTATION]: 'anchor',
      }),
      ...entities.map(e =>
        component(e.name, e.owner, {
          ...e.annotations,
          [CAMPAIGN_ANNOTATION]: 'entity',
        }),
      ),
    ]
      .map(doc => JSON.stringify(doc))
      .join('\n---\n');
  }

  private async call(url: string, path: string, init: RequestInit = {}) {
    return fetch(`${url}/api/catalog${path}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${this.token}`,
        'Content-Type': 'application/json',
      },
      signal: AbortSignal.timeout(10_000),
    });
  }

  private async entities(url: string, filters: string[]) {
    const query = filters
      .map(f => `filter=${encodeURIComponent(f)}`)
      .concat(`fields=${FIELDS}`)
      .join('&');
    const res = await this.call(url, `/entities?${query}`);
    if (!res.ok)
      throw new Error(
        `GET /api/catalog/entities: ${res.status} ${await res.text()}`,
      );
    return (await res.json()) as ServedEntity[];
  }

  /**
   * Every entity with Kubernetes annotations the catalog holds besides the
   * campaign's (the demo's Components), once `mustHave` are among them.
   */
  async readBase(mustHave: string[]): Promise<CatalogEntity[]> {
    const deadline = Date.now() + SYNC_TIMEOUT_MS;
    for (;;) {
      const served = await this.entities(this.replicaUrls()[0], [
        `metadata.annotations.${KUBERNETES_ID}`,
        `metadata.annotations.${LABEL_SELECTOR}`,
      ]).catch(() => [] as ServedEntity[]);
      const base = served
        .filter(e => !e.metadata.annotations?.[CAMPAIGN_ANNOTATION])
        .map(
          (e): CatalogEntity => ({
            ref: refOf(e),
            owner: e.spec?.owner
              ? ownerRef(e.spec.owner, e.metadata.namespace)
              : undefined,
            annotations: pick(e.metadata.annotations ?? {}),
            visibleAt: 0,
          }),
        );
      if (mustHave.every(ref => base.some(e => e.ref === ref))) return base;
      if (Date.now() > deadline)
        throw new Error(
          `the demo catalog did not hold ${mustHave.join(', ')} within ${
            SYNC_TIMEOUT_MS / 1000
          } s`,
        );
      await sleep(500);
    }
  }

  /**
   * Makes the catalog hold exactly `entities` of the campaign's: writes the
   * file, asks for a refresh, deletes the entities the file no longer has,
   * and waits until every replica serves exactly `entities`. Returns when that was seen (historyNow()).
   */
  async apply(entities: EntityPlan[]): Promise<number> {
    if (entities.length === 0 && !this.holdsAny) return historyNow();
    writeFileSync(this.path, CampaignCatalog.contents(entities));
    this.current = entities;
    const deadline = Date.now() + SYNC_TIMEOUT_MS;
    let refreshedAt = 0;
    const deleting = new Set<string>();
    for (;;) {
      const urls = this.replicaUrls();
      if (Date.now() - refreshedAt > REFRESH_EVERY_MS) {
        refreshedAt = Date.now();
        await this.call(urls[0], '/refresh', {
          method: 'POST',
          body: JSON.stringify({ entityRef: ANCHOR }),
        }).catch(() => undefined);
      }
      let settled = true;
      for (const url of urls) {
        const served = await this.entities(url, [
          `metadata.annotations.${CAMPAIGN_ANNOTATION}=entity`,
        ]).catch(() => undefined);
        if (!served) {
          settled = false;
          continue;
        }
        for (const e of served) {
          const wanted = entities.find(w => w.name === e.metadata.name);
          if (wanted) continue;
          settled = false;
          // Gone from the file. Deleted now: the location re-read without it
          // does not bring it back (if a read of the old file does, it is
          // deleted again, under its new uid).
          const uid = e.metadata.uid;
          if (uid && !deleting.has(uid)) {
            deleting.add(uid);
            await this.call(url, `/entities/by-uid/${uid}`, {
              method: 'DELETE',
            }).catch(() => deleting.delete(uid));
          }
        }
        for (const w of entities) {
          const e = served.find(s => s.metadata.name === w.name);
          if (
            !e ||
            e.spec?.owner !== w.owner ||
            JSON.stringify(pick(e.metadata.annotations ?? {})) !==
              JSON.stringify(pick(w.annotations))
          )
            settled = false;
        }
      }
      if (settled) return historyNow();
      if (Date.now() > deadline)
        throw new Error(
          `the catalog did not serve the scenario's ${
            entities.length
          } entities (and only those) on every replica within ${
            SYNC_TIMEOUT_MS / 1000
          } s`,
        );
      await sleep(250);
    }
  }
}

/** The annotations that locate workloads (and the demo's visibility mark, and the opt-in to automatic pruning), in a fixed order. */
function pick(annotations: Record<string, string>) {
  const keys = [
    KUBERNETES_ID,
    LABEL_SELECTOR,
    NAMESPACE_ANNOTATION,
    CLUSTER_ANNOTATION,
    'pvc-pruner.demo/claims-visible-to',
    AUTO_PRUNE_ANNOTATION,
  ];
  return Object.fromEntries(
    keys
      .filter(k => annotations[k] !== undefined)
      .map(k => [k, annotations[k]]),
  );
}
