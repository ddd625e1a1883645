import type { ClusterCache, ClusterCaches, KubeGateways } from '../kubernetes';

/**
 * For a cluster, the claim uids whose lineage must be kept whatever its
 * age; undefined when that cannot be told now (keep all of that cluster's).
 */
export type StillReferenced = (
  cluster: string,
) => ReadonlySet<string> | undefined;

const NOTHING: ReadonlySet<string> = new Set();

/**
 * The claim uids the clusters still reference, for retention: every claim
 * that exists, and every claim a volume's claimRef names (a Released
 * volume's lineage is what says whose it is). Read from the watch caches
 * that are ready; a configured cluster without one is not judged this time,
 * so its lineage is kept, and a cluster no longer configured references
 * nothing. Without this, lineage aged past the retention would turn a
 * claim that is still there, or a Released volume, into one nobody owns.
 */
export class ReferencedClaimUids {
  constructor(
    private readonly deps: {
      gateways: Pick<KubeGateways, 'list'>;
      caches: Pick<ClusterCaches, 'readyCaches'>;
    },
  ) {}

  async snapshot(): Promise<StillReferenced> {
    const configured = new Set(
      (await this.deps.gateways.list()).map(c => c.name),
    );
    const ready = new Map(
      this.deps.caches
        .readyCaches()
        .map(({ cluster, cache }) => [cluster, referencedIn(cache)]),
    );
    return cluster =>
      ready.get(cluster) ?? (configured.has(cluster) ? undefined : NOTHING);
  }
}

function referencedIn(cache: ClusterCache): Set<string> {
  const uids = new Set<string>();
  for (const claim of cache.claims.all())
    if (claim.metadata?.uid) uids.add(claim.metadata.uid);
  for (const pv of cache.volumes.all())
    if (pv.spec?.claimRef?.uid) uids.add(pv.spec.claimRef.uid);
  return uids;
}
