import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import type { V1PersistentVolume } from '@kubernetes/client-node';
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
import { mapLimited } from '../mapLimited';
import { ReclaimPermissions } from './ReclaimPermissions';
import {
  releasedVolumeFacts,
  ReleasedVolumeFacts,
  STATIC_VOLUME_REASON,
} from './releasedVolumeRule';
import { VolumeAttribution } from './VolumeAttribution';

/** Volumes listed at most, largest first. */
export const MAX_LISTED_VOLUMES = 500;
/** Released volumes whose claim is looked up live, per cluster without a watch cache. */
const MAX_LIVE_CLAIM_READS = 1000;
const CLAIM_READ_CONCURRENCY = 8;

/** A Released volume whose claim is gone, in one cluster. */
interface Found {
  cluster: string;
  facts: ReleasedVolumeFacts;
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
    const found = (
      await Promise.all(
        clusters.map(c =>
          this.releasedIn(c, requestAuth).catch(e => {
            errors.push({ cluster: c.name, message: (e as Error).message });
            return [] as Found[];
          }),
        ),
      )
    ).flat();
    const byCluster = new Map<string, Found[]>();
    for (const f of found)
      byCluster.set(f.cluster, [...(byCluster.get(f.cluster) ?? []), f]);
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
        const reclaimable = Boolean(facts.provisionedBy);
        const monthlyCost = this.deps.prices?.monthlyCost(
          facts.bytes,
          facts.storageClass,
        );
        const reason = !reclaimable
          ? STATIC_VOLUME_REASON
          : verdict.refusal ?? verdict.note;
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
            canReclaim: reclaimable && verdict.reclaimable,
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
      truncated: shown.length > items.length,
      totals: {
        volumes: counted.length,
        bytes: counted.reduce((n, v) => n + v.bytes, 0),
        ...(priced.length > 0
          ? { monthlyCost: priced.reduce((n, v) => n + v.monthlyCost!, 0) }
          : {}),
      },
      errors,
    };
  }

  /** The cluster's Released volumes whose claim (that uid) no longer exists. */
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
    const exists = cache
      ? released.map(
          f =>
            cache.claims.get(f.claim.namespace, f.claim.name)?.metadata?.uid ===
            f.claim.uid,
        )
      : await this.liveClaimsExist(gateway, released);
    return released
      .filter((_, i) => !exists[i])
      .map(facts => ({ cluster: cluster.name, facts }));
  }

  /** Whether each volume's claim exists, read live; those past the read limit are taken to exist (not offered). */
  private liveClaimsExist(
    gateway: KubeGateway,
    released: ReleasedVolumeFacts[],
  ): Promise<boolean[]> {
    return mapLimited(released, CLAIM_READ_CONCURRENCY, async (f, i) => {
      if (i >= MAX_LIVE_CLAIM_READS) return true;
      const claim = await gateway.readClaim(f.claim.namespace, f.claim.name);
      return claim?.metadata?.uid === f.claim.uid;
    });
  }
}
