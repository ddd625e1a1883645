import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import type { V1StatefulSet } from '@kubernetes/client-node';
import type { DeleteGuard, DeleteGuardFactory } from '../jobs';
import type { KubeGateway } from '../kubernetes';
import type { EntityWorkloadTarget } from '../orphans';
import { claimWithLabels } from '../orphans/orphanRule';
import {
  catalogUidOf,
  ClaimantIndex,
  type ClaimantAtRequest,
  listRefs,
  OwnershipChecks,
  WorkloadCatalog,
} from '../ownership';
import { claimantsByLabels } from './LeftBehindFinder';

/** What a prune of a deleted StatefulSet's claims was authorized on. */
export interface AuthorizedLeftBehind {
  credentials: BackstageCredentials;
  target?: EntityWorkloadTarget;
  cluster: string;
  /** The deleted StatefulSet's stand-in (see deletedStatefulSet): it has no labels to match. */
  deleted: V1StatefulSet;
  /** The uids of the claims the job prunes. */
  claimUids: readonly string[];
  /** The claimants authorized at the request, with their catalog uids: the recorded ones and those whose selectors matched the claims' labels. */
  claimants: readonly ClaimantAtRequest[];
}

/**
 * Before each delete of a deleted StatefulSet's claims, finds their
 * claimants as the request did: the recorded ones plus every entity whose
 * selector now matches a claim's labels (the claims listed live, the
 * catalog as last read, at most WorkloadCatalog's maxStaleMs old). A
 * claimant not authorized yet is authorized now, on the requester's
 * credentials and by the same rules; one the requester may not prune on
 * stops the job before its next delete, as OwnershipGuard stops a prune of
 * a live StatefulSet whose labels bring in a new claimant. (The deleted
 * StatefulSet's stand-in has no labels, so OwnershipGuard alone sees no
 * claimant but the recorded ones.) An authorized claimant that leaves the
 * catalog, or whose ref another entity takes (another uid), is judged again
 * too: the job then goes on only for a requester with
 * `pvc-pruner.unowned.prune`.
 */
export class LeftBehindClaimantsGuard implements DeleteGuard {
  abortReason: string | undefined = undefined;
  private readonly authorized: Map<string, string>;
  /** Authorized claimants found gone (or re-registered) and judged so already. */
  private readonly gone = new Set<string>();

  private constructor(
    private readonly deps: {
      workloads: Pick<WorkloadCatalog, 'warm'>;
      ownership: Pick<OwnershipChecks, 'authorizePrune'>;
    },
    private readonly prune: AuthorizedLeftBehind,
  ) {
    this.authorized = new Map(prune.claimants.map(c => [c.ref, c.uid]));
  }

  /** The factory a left-behind prune's request hands its job. */
  static factory(
    deps: LeftBehindClaimantsGuard['deps'],
    prune: AuthorizedLeftBehind,
  ): DeleteGuardFactory {
    return { start: async () => new LeftBehindClaimantsGuard(deps, prune) };
  }

  async confirmLive(gateway: KubeGateway): Promise<void> {
    if (this.abortReason) return;
    const { deleted, cluster } = this.prune;
    const namespace = deleted.metadata?.namespace ?? '';
    const [claims, index] = await Promise.all([
      gateway.listClaims(namespace, claimWithLabels),
      this.deps.workloads.warm(),
    ]);
    const added = this.claimantsNow(index, namespace, claims)
      .filter(ref => !this.authorized.has(ref))
      .map(ref => ({ ref, uid: catalogUidOf(index, ref) ?? '' }));
    const gone = [...this.authorized]
      .filter(([ref, uid]) => catalogUidOf(index, ref) !== uid)
      .map(([ref]) => ref)
      .filter(ref => !this.gone.has(ref));
    if (added.length === 0 && gone.length === 0) return;
    try {
      await this.deps.ownership.authorizePrune({
        credentials: this.prune.credentials,
        target: this.prune.target,
        cluster,
        statefulSet: deleted,
        gateway,
        index,
        alsoClaimedBy: [
          ...[...this.authorized].map(([ref, uid]) => ({ ref, uid })),
          ...added,
        ],
      });
    } catch (e) {
      if (!(e instanceof NotAllowedError)) throw e;
      const changes = [
        ...(added.length
          ? [
              `(a selector now matches their labels): now also ${listRefs(
                added.map(c => c.ref),
              )}`,
            ]
          : []),
        ...(gone.length
          ? [
              `(left the catalog, or registered again by someone else): no longer ${listRefs(
                gone,
              )}`,
            ]
          : []),
      ];
      this.abortReason = `the claimants of the claims left by StatefulSet ${namespace}/${
        deleted.metadata?.name
      } changed during the job ${changes.join('; ')}. ${e.message}`;
      return;
    }
    added.forEach(c => this.authorized.set(c.ref, c.uid));
    gone.forEach(ref => this.gone.add(ref));
  }

  private claimantsNow(
    index: ClaimantIndex,
    namespace: string,
    claims: Awaited<ReturnType<KubeGateway['listClaims']>>,
  ): string[] {
    const uids = new Set(this.prune.claimUids);
    const byLabels = claimantsByLabels(index, this.prune.cluster, namespace);
    const refs = new Set<string>();
    for (const claim of claims)
      if (uids.has(claim.metadata?.uid ?? ''))
        byLabels(claim.metadata?.labels ?? {}).forEach(ref => refs.add(ref));
    return [...refs].sort();
  }

  stop() {}
}
