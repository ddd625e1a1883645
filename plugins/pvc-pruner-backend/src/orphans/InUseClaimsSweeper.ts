import type { SchedulerService } from '@backstage/backend-plugin-api';
import type { V1Pod } from '@kubernetes/client-node';
import type { InUseClaim, OrphanSightingStore } from '../database';
import type { ClusterCache, ClusterCaches } from '../kubernetes';
import { claimNamesOfPod } from '../kubernetes/podClaims';

export const IN_USE_CLAIMS_TASK_ID = 'pvc-pruner-forget-in-use-claims';

/** What one cluster's pods referenced at the last sweep. */
interface Referenced {
  cache: ClusterCache;
  /** The pods' store version it was read at: unchanged pods reference the same claims. */
  podsVersion: number;
  /** Each claim referenced, by the pod that references it ({@link referenceKey}). */
  references: Set<string>;
}

/**
 * Forgets the first sightings of the claims a pod references, as every
 * ready watch cache holds its pods, every few seconds: a claim in use for
 * a while (a StatefulSet scaled up for half an hour, a backup Job mounting
 * it) starts a new grace once orphaned again, although no scan saw it in
 * use. Reads the caches only, never the API server; writes only the claims
 * referenced since the last sweep (all of them at the first sweep, or when
 * a cache comes back), so an unchanged cluster costs nothing. Each replica
 * sweeps its own caches (`scope: 'local'`).
 */
export class InUseClaimsSweeper {
  private readonly referenced = new Map<string, Referenced>();

  constructor(
    private readonly deps: {
      caches: Pick<ClusterCaches, 'readyCaches'>;
      sightings: Pick<OrphanSightingStore, 'forgetInUse'>;
    },
  ) {}

  /** Sweeps every `seconds` (10 unless told). */
  static async schedule(
    scheduler: SchedulerService,
    deps: InUseClaimsSweeper['deps'],
    seconds = 10,
  ): Promise<InUseClaimsSweeper> {
    const sweeper = new InUseClaimsSweeper(deps);
    await scheduler.scheduleTask({
      id: IN_USE_CLAIMS_TASK_ID,
      scope: 'local',
      frequency: { seconds },
      timeout: { minutes: 1 },
      initialDelay: { seconds },
      fn: () => sweeper.sweep(),
    });
    return sweeper;
  }

  async sweep(): Promise<void> {
    const ready = this.deps.caches.readyCaches();
    const readyNames = new Set(ready.map(r => r.cluster));
    // A cache not ready may miss pods that came and went: its next sweep sends everything.
    for (const cluster of [...this.referenced.keys()])
      if (!readyNames.has(cluster)) this.referenced.delete(cluster);
    for (const { cluster, cache } of ready) {
      const last = this.referenced.get(cluster);
      const podsVersion = cache.pods.version;
      if (last?.cache === cache && last.podsVersion === podsVersion) continue;
      const references = new Map<string, InUseClaim>();
      for (const pod of cache.pods.all()) {
        const namespace = pod.metadata?.namespace ?? '';
        for (const name of claimNamesOfPod(pod))
          references.set(referenceKey(pod, name), { namespace, name });
      }
      const known = last?.cache === cache ? last.references : undefined;
      const newlyReferenced = new Map<string, InUseClaim>();
      for (const [key, claim] of references)
        if (!known?.has(key))
          newlyReferenced.set(`${claim.namespace}\n${claim.name}`, claim);
      // Remembered only once written: a failed write is sent again next sweep.
      await this.deps.sightings.forgetInUse(cluster, [
        ...newlyReferenced.values(),
      ]);
      this.referenced.set(cluster, {
        cache,
        podsVersion,
        references: new Set(references.keys()),
      });
    }
  }
}

/**
 * A claim as one pod references it: a pod re-created under the same name
 * (a StatefulSet's, a Job's) has a new uid, so a claim it mounts again
 * between two sweeps is still newly referenced.
 */
function referenceKey(pod: V1Pod, claim: string): string {
  const { uid, namespace, name } = pod.metadata ?? {};
  return `${uid ?? ''}\n${namespace ?? ''}\n${name ?? ''}\n${claim}`;
}
