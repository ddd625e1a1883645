import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import type {
  ReleasedVolume,
  ReleasedVolumesResponse,
} from 'backstage-plugin-pvc-pruner-common';
import type { PriceList } from '../cost';
import {
  ClusterCaches,
  KubeGateway,
  KubeGateways,
  LocatedCluster,
} from '../kubernetes';
import { claimAsTheRuleReadsIt } from '../orphans/orphanRule';
import { ReclaimPermissions } from './ReclaimPermissions';
import {
  claimBlocks,
  releasedVolumeFacts,
  ReleasedVolumeFacts,
  unmanagedReason,
} from './releasedVolumeRule';
import { VolumeAttribution } from './VolumeAttribution';

/** Volumes listed at most, largest first. */
export const MAX_LISTED_VOLUMES = 500;
/**
 * Released volumes traced and judged per call, largest first: a bound on the
 * lineage and permission work one fleet read costs. Past it the answer says
 * it is truncated.
 */
const MAX_CONSIDERED_VOLUMES = 4 * MAX_LISTED_VOLUMES;
/** StorageClasses read per cluster, for volumes without a CSI source. */
const MAX_CLASS_READS = 20;

/** A Released volume whose claim is gone, in one cluster. */
interface Found {
  cluster: string;
  facts: ReleasedVolumeFacts;
  /** Why it is not offered although its claim is gone: a recovery, or a source no provisioner manages. */
  blocked?: string;
  unmanaged?: string;
}

/**
 * Lists the Released volumes whose claim no longer exists, read as the scans
 * read (the cluster's watch cache when it is synced, else live), each traced
 * to the StatefulSet and entities its claim belonged to, and shown only to
 * who may read it, with whether they may reclaim it.
 */
export class ReleasedVolumes {
  private readonly permissions: ReclaimPermissions;

  constructor(
    private readonly deps: {
      gateways: KubeGateways;
      caches?: ClusterCaches;
      attribution: VolumeAttribution;
      permissions: ReclaimPermissions;
      prices?: PriceList;
    },
  ) {
    this.permissions = deps.permissions;
  }

  /**
   * With `entityRef`, the volumes traced to that entity; without, the
   * fleet's. The caller must already be allowed to read the entity.
   */
  async list(
    credentials: BackstageCredentials,
    options: { entityRef?: string },
    requestAuth: KubernetesRequestAuth = {},
  ): Promise<ReleasedVolumesResponse> {
    const clusters = await this.deps.gateways.list();
    const errors: ReleasedVolumesResponse['errors'] = [];
    const all = (
      await Promise.all(
        clusters.map(c =>
          this.releasedIn(c, requestAuth).catch(e => {
            errors.push({ cluster: c.name, message: (e as Error).message });
            return [] as Found[];
          }),
        ),
      )
    )
      .flat()
      .sort((a, b) => b.facts.bytes - a.facts.bytes);
    const found = all.slice(0, MAX_CONSIDERED_VOLUMES);
    const byCluster = new Map<string, Found[]>();
    for (const f of found) {
      const list = byCluster.get(f.cluster);
      if (list) list.push(f);
      else byCluster.set(f.cluster, [f]);
    }
    const traced = (
      await Promise.all(
        [...byCluster].map(async ([cluster, volumes]) => {
          const attributions = await this.deps.attribution.of(
            cluster,
            volumes.map(v => v.facts.claim.uid),
          );
          return volumes.map(v => ({
            ...v,
            attribution: attributions.get(v.facts.claim.uid)!,
          }));
        }),
      )
    )
      .flat()
      .filter(
        v =>
          !options.entityRef ||
          v.attribution.claimants.includes(options.entityRef),
      );
    const verdicts = await this.permissions.judge(
      credentials,
      traced.map(t => t.attribution),
    );
    const shown: ReleasedVolume[] = traced
      .flatMap((t, i) => {
        const verdict = verdicts[i];
        if (!verdict.readable) return [];
        const { facts, attribution } = t;
        const reclaimable = !t.unmanaged;
        const monthlyCost = this.deps.prices?.monthlyCost(
          facts.bytes,
          facts.storageClass,
        );
        const reason =
          t.unmanaged ?? t.blocked ?? verdict.refusal ?? verdict.note;
        return [
          {
            cluster: t.cluster,
            name: facts.name,
            uid: facts.uid,
            resourceVersion: facts.resourceVersion,
            bytes: facts.bytes,
            ...(facts.storageClass ? { storageClass: facts.storageClass } : {}),
            ...(facts.reclaimPolicy
              ? { reclaimPolicy: facts.reclaimPolicy }
              : {}),
            ...(monthlyCost !== undefined ? { monthlyCost } : {}),
            ...(facts.releasedSince
              ? { releasedSince: facts.releasedSince }
              : {}),
            claim: facts.claim,
            ...(attribution.statefulSet
              ? { statefulSet: attribution.statefulSet }
              : {}),
            ...(attribution.claimants.length > 0
              ? { entityRef: options.entityRef ?? attribution.claimants[0] }
              : {}),
            claimants: attribution.claimants,
            reclaimable,
            canReclaim: reclaimable && !t.blocked && verdict.reclaimable,
            ...(reason ? { reason } : {}),
          },
        ];
      })
      .sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
    const items = shown.slice(0, MAX_LISTED_VOLUMES);
    const counted = items.filter(v => v.reclaimable);
    const priced = counted.filter(v => v.monthlyCost !== undefined);
    return {
      items,
      truncated: shown.length > items.length || all.length > found.length,
      totals: {
        volumes: counted.length,
        bytes: counted.reduce((n, v) => n + v.bytes, 0),
        // Nothing left to reclaim costs nothing: the total falls to $0.00, not to no figure.
        ...(priced.length > 0 || (this.deps.prices && counted.length === 0)
          ? { monthlyCost: priced.reduce((n, v) => n + v.monthlyCost!, 0) }
          : {}),
      },
      errors,
    };
  }

  /**
   * The cluster's Released volumes whose claim (that uid) no longer exists,
   * with what blocks a reclaim. Without a watch cache, the claims are one
   * paginated LIST, not a GET per volume.
   */
  private async releasedIn(
    cluster: LocatedCluster,
    requestAuth: KubernetesRequestAuth,
  ): Promise<Found[]> {
    const gateway = this.deps.gateways.forCluster(cluster, requestAuth);
    const cache = await this.deps.caches?.whenReady(cluster, gateway, {
      start: cluster.locatorType !== 'catalog',
    });
    const volumes: Iterable<V1PersistentVolume> = cache
      ? cache.volumes.all()
      : (await gateway.listCollection<V1PersistentVolume>('persistentvolumes'))
          .items;
    const released: ReleasedVolumeFacts[] = [];
    for (const pv of volumes) {
      const facts = releasedVolumeFacts(pv);
      if (facts) released.push(facts);
    }
    if (released.length === 0) return [];
    const claimAt = cache
      ? (f: ReleasedVolumeFacts) =>
          cache.claims.get(f.claim.namespace, f.claim.name)
      : await liveClaims(gateway);
    const provisioners = await classProvisioners(gateway, released);
    return released.flatMap(facts => {
      const claim = claimAt(facts);
      if (claim?.metadata?.uid === facts.claim.uid) return [];
      const blocked = claimBlocks(facts, claim);
      const unmanaged = unmanagedReason(
        facts,
        provisioners.get(facts.storageClass ?? ''),
      );
      return [
        {
          cluster: cluster.name,
          facts,
          ...(blocked ? { blocked } : {}),
          ...(unmanaged ? { unmanaged } : {}),
        },
      ];
    });
  }
}

/** Every claim of the cluster, in one paginated LIST, found by namespace and name. */
async function liveClaims(
  gateway: KubeGateway,
): Promise<(f: ReleasedVolumeFacts) => V1PersistentVolumeClaim | undefined> {
  const { items } = await gateway.listCollection<V1PersistentVolumeClaim>(
    'persistentvolumeclaims',
    claimAsTheRuleReadsIt,
  );
  const byName = new Map(
    items.map(c => [`${c.metadata?.namespace}/${c.metadata?.name}`, c]),
  );
  return f => byName.get(`${f.claim.namespace}/${f.claim.name}`);
}

/** The provisioner of each StorageClass that volumes without a CSI source name (at most MAX_CLASS_READS); one that cannot be read is absent. */
async function classProvisioners(
  gateway: KubeGateway,
  released: ReleasedVolumeFacts[],
): Promise<Map<string, string>> {
  const names = [
    ...new Set(
      released.flatMap(f =>
        !f.csiDriver && f.provisionedBy && f.storageClass
          ? [f.storageClass]
          : [],
      ),
    ),
  ].slice(0, MAX_CLASS_READS);
  const read = await Promise.all(
    names.map(name => gateway.readStorageClass(name).catch(() => undefined)),
  );
  const provisioners = new Map<string, string>();
  read.forEach(
    (sc, i) => sc?.provisioner && provisioners.set(names[i], sc.provisioner),
  );
  return provisioners;
}
