import type {
  BackstageCredentials,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import type { V1StatefulSet } from '@kubernetes/client-node';
import {
  pvcPrunerOrphansReadPermission,
  pvcPrunerPrunePermission,
  pvcPrunerUnownedPrunePermission,
} from 'backstage-plugin-pvc-pruner-common';
import type { KubeGateway } from '../kubernetes';
import type { Admit, EntityWorkloadTarget } from '../orphans';
import { authorizeEntities } from '../permissions';
import { ClaimantIndex, MAX_CLAIMANTS } from './ClaimantIndex';
import { NamespaceOwners } from './NamespaceOwners';
import { WorkloadCatalog } from './WorkloadCatalog';
import {
  ownerOf,
  selectsByKubernetesId,
  WorkloadEntity,
} from './WorkloadEntity';

/**
 * What a read of an entity's StatefulSets admits: a StatefulSet is shown
 * only to who may read every entity that claims it (the entity itself
 * already known readable, and the read going through it).
 */
export function admitReadersOf(
  ownership: Pick<OwnershipChecks, 'readable'>,
  credentials: BackstageCredentials,
  target: EntityWorkloadTarget,
): Admit {
  return items =>
    ownership.readable(credentials, items, {
      readable: new Set([target.entityRef]),
      through: target,
    });
}

/** A StatefulSet as its cluster has it (its labels decide who claims it). */
export interface ClaimedStatefulSet {
  cluster: string;
  statefulSet: V1StatefulSet;
}

/** Who claims a StatefulSet, and which of them the caller may not read. */
export interface ReadVerdict {
  /** Every claimant, by entity ref, sorted (at most MAX_CLAIMANTS + 1). */
  claimants: string[];
  /** The claimants the caller may not read: the StatefulSet is shown only when there are none. */
  refused: string[];
  /** More than MAX_CLAIMANTS entities claim it: a catalog error, shown to nobody (its claimants are not asked about). */
  crowded: boolean;
  /** Basic permissions a prune needs beyond `pvc-pruner.prune` on every claimant. */
  pruneNeeds: string[];
}

/** What a prune was authorized on: the StatefulSet's claimants at the time. */
export interface AuthorizedPrune {
  claimants: string[];
  /** Those of them in the catalog as recorded (not gone): the job is read by who may read each. */
  present: string[];
}

/**
 * A claimant a request was authorized on beyond those a StatefulSet's
 * labels name (a deleted StatefulSet's recorded ones), with the catalog uid
 * it had: an entity under the same ref with another uid is someone else.
 */
export interface ClaimantAtRequest {
  ref: string;
  uid: string;
}

/** The catalog uid of the entity under `ref` in `index`, if any. */
export function catalogUidOf(
  index: Pick<ClaimantIndex, 'get'>,
  ref: string,
): string | undefined {
  return index.get(ref)?.entity.metadata.uid;
}

/** Refusals name at most this many claimants. */
const NAMED = 5;

/** "a, b and 3 more" for entity refs. */
export function listRefs(refs: string[]): string {
  const named = refs.slice(0, NAMED).join(', ');
  return refs.length > NAMED
    ? `${named} and ${refs.length - NAMED} more`
    : named;
}

function nameOf(cluster: string, sts: V1StatefulSet) {
  return `StatefulSet ${sts.metadata?.namespace}/${sts.metadata?.name} in cluster "${cluster}"`;
}

/**
 * The StatefulSet's claimants in `index`, with the entity a request goes
 * through among them even if the read is older than that entity, and the
 * recorded claimants (`alsoClaimedBy`) that are not in `index` under the
 * uid they were authorized with (`gone`: removed, or another entity
 * registered under the ref since, whose owners never claimed these claims).
 */
function claimantsWith(
  index: ClaimantIndex,
  item: ClaimedStatefulSet,
  through?: EntityWorkloadTarget,
  alsoClaimedBy: readonly ClaimantAtRequest[] = [],
): { claimants: WorkloadEntity[]; gone: string[] } {
  const claimants = index.claimantsOf(item.cluster, item.statefulSet);
  if (through && !claimants.some(c => c.entityRef === through.entityRef))
    claimants.push({ ...through, owner: ownerOf(through.entity) });
  const gone = new Set<string>();
  for (const { ref, uid } of alsoClaimedBy) {
    const entity = index.get(ref);
    if (!entity || entity.entity.metadata.uid !== uid) gone.add(ref);
    else if (!claimants.some(c => c.entityRef === ref)) claimants.push(entity);
  }
  return {
    claimants: claimants.sort((a, b) => (a.entityRef < b.entityRef ? -1 : 1)),
    gone: [...gone].sort(),
  };
}

/**
 * Whether some claimant selects the StatefulSet by the plain
 * `backstage.io/kubernetes-id` label, which it must then carry: otherwise
 * nothing but selectors (a catch-all, say, or two) claims it, which shows
 * it is nobody's own, and a prune needs `pvc-pruner.unowned.prune`.
 */
function vouchedFor(claimants: WorkloadEntity[]): boolean {
  return claimants.some(selectsByKubernetesId);
}

/**
 * For each list of claimants, those the caller may not
 * `pvc-pruner.orphans.read`, asked in one batch; `readable` are known to be
 * readable and not asked again. A crowded list is not asked about: all of
 * it is refused.
 */
export async function refusedReads(
  permissions: PermissionsService,
  credentials: BackstageCredentials,
  lists: Array<{ claimants: string[]; crowded: boolean }>,
  readable: ReadonlySet<string>,
): Promise<string[][]> {
  const unknown = [
    ...new Set(
      lists
        .filter(l => !l.crowded)
        .flatMap(l => l.claimants)
        .filter(ref => !readable.has(ref)),
    ),
  ];
  const { allowed } = unknown.length
    ? await authorizeEntities({
        permissions,
        permission: pvcPrunerOrphansReadPermission,
        entityRefs: unknown,
        credentials,
      })
    : { allowed: new Set<string>() };
  return lists.map(l =>
    l.crowded
      ? l.claimants
      : l.claimants.filter(ref => !readable.has(ref) && !allowed.has(ref)),
  );
}

/**
 * Ownership checked from every side. An entity's annotations are written by
 * whoever writes its catalog YAML, so they prove nothing alone: a
 * StatefulSet may be read or pruned only by a caller permitted on every
 * entity that claims it (whose annotations map it to the StatefulSet),
 * found with the plugin's own credentials over the whole catalog. Each
 * check is one batch to the permission framework.
 */
export class OwnershipChecks {
  constructor(
    private readonly deps: {
      permissions: PermissionsService;
      workloads: WorkloadCatalog;
      namespaceOwners: NamespaceOwners;
    },
  ) {}

  /** The claimants of a StatefulSet, as the warm catalog read has them. */
  async claimantsOf(item: ClaimedStatefulSet): Promise<string[]> {
    const index = await this.deps.workloads.warm();
    return index
      .claimantsOf(item.cluster, item.statefulSet)
      .map(e => e.entityRef);
  }

  /**
   * For each StatefulSet, its claimants and those the caller may not
   * `pvc-pruner.orphans.read`, in one batch; `readable` are entity refs
   * already known to be readable, not asked again, and `through` the entity
   * the request reads through.
   */
  async readable(
    credentials: BackstageCredentials,
    items: ClaimedStatefulSet[],
    options: {
      readable?: ReadonlySet<string>;
      through?: EntityWorkloadTarget;
    } = {},
  ): Promise<ReadVerdict[]> {
    if (items.length === 0) return [];
    const readable = options.readable ?? new Set<string>();
    const index = await this.deps.workloads.warm();
    const claimants = items.map(
      item => claimantsWith(index, item, options.through).claimants,
    );
    const crowded = claimants.map(c => c.length > MAX_CLAIMANTS);
    const refused = await refusedReads(
      this.deps.permissions,
      credentials,
      claimants.map((c, i) => ({
        claimants: c.map(e => e.entityRef),
        crowded: crowded[i],
      })),
      readable,
    );
    return claimants.map((entities, i) => {
      const refs = entities.map(e => e.entityRef);
      return {
        claimants: refs,
        refused: refused[i],
        crowded: crowded[i],
        pruneNeeds: vouchedFor(entities)
          ? []
          : [pvcPrunerUnownedPrunePermission.name],
      };
    });
  }

  /**
   * Throws NotAllowedError unless the caller may prune the StatefulSet: held
   * `pvc-pruner.prune` on every claimant (the `target` the prune goes
   * through among them), and `pvc-pruner.unowned.prune` when nothing but a
   * selector other than the plain kubernetes-id vouches for it (or nothing
   * at all: no `target`); with the namespace binding on, the Namespace
   * names every claimant's owner. `index` is the catalog read to judge by
   * (the warm one unless given). A recorded claimant (`alsoClaimedBy`) not
   * in it under its uid left the catalog (removed, renamed, its Kubernetes
   * annotations dropped, or registered again by someone else): its owners
   * cannot be asked, so the prune then needs `pvc-pruner.unowned.prune`
   * too; it is never skipped.
   */
  async authorizePrune(options: {
    credentials: BackstageCredentials;
    target?: EntityWorkloadTarget;
    cluster: string;
    statefulSet: V1StatefulSet;
    gateway: KubeGateway;
    index?: ClaimantIndex;
    /** Claimants beyond those the StatefulSet's labels name (a deleted StatefulSet's recorded ones). */
    alsoClaimedBy?: readonly ClaimantAtRequest[];
  }): Promise<AuthorizedPrune> {
    const { credentials, target, cluster, statefulSet } = options;
    const index = options.index ?? (await this.deps.workloads.warm());
    const { claimants, gone } = claimantsWith(
      index,
      { cluster, statefulSet },
      target,
      options.alsoClaimedBy,
    );
    const refs = claimants.map(c => c.entityRef);
    const what = nameOf(cluster, statefulSet);
    const all = [...new Set([...refs, ...gone])].sort();
    if (all.length > MAX_CLAIMANTS)
      throw new NotAllowedError(
        `${what} is claimed by more than ${MAX_CLAIMANTS} catalog entities (${listRefs(
          refs,
        )}): pvc-pruner takes that as an error in the catalog and prunes it for nobody until their Kubernetes annotations are narrowed`,
      );
    const { allowed, basic } = await authorizeEntities({
      permissions: this.deps.permissions,
      permission: pvcPrunerPrunePermission,
      entityRefs: refs,
      basic: [pvcPrunerUnownedPrunePermission],
      credentials,
    });
    const [unownedPrune] = basic;
    if (target && !allowed.has(target.entityRef))
      throw new NotAllowedError(
        `You are not allowed to prune the claims of ${target.entityRef} (${pvcPrunerPrunePermission.name})`,
      );
    if (!target && refs.length > 0)
      throw new NotAllowedError(
        `${what} is claimed by ${listRefs(
          refs,
        )}: prune it from the card of the entity it belongs to`,
      );
    const refused = refs.filter(ref => !allowed.has(ref));
    if (refused.length > 0)
      throw new NotAllowedError(
        `${what} is also claimed by ${listRefs(refused)}: pruning it needs ${
          pvcPrunerPrunePermission.name
        } on every entity that claims it, and you lack it on ${
          refused.length === 1 ? 'that one' : 'those'
        }`,
      );
    if (!unownedPrune) {
      if (gone.length > 0)
        throw new NotAllowedError(
          `${what} was recorded as claimed by ${listRefs(
            gone,
          )}, no longer in the catalog as recorded (removed, renamed, its Kubernetes annotations dropped, or registered again by someone else), so ${
            gone.length === 1 ? 'its' : 'their'
          } owners cannot be asked: pruning it needs ${
            pvcPrunerUnownedPrunePermission.name
          }`,
        );
      if (!target)
        throw new NotAllowedError(
          `No catalog entity claims ${what}: pruning it needs ${pvcPrunerUnownedPrunePermission.name}`,
        );
      if (!vouchedFor(claimants))
        throw new NotAllowedError(
          `No entity claims ${what} by the plain backstage.io/kubernetes-id label, only by selectors (${claimants
            .map(c => `${c.entityRef}: "${c.labelSelector.slice(0, 100)}"`)
            .slice(0, 5)
            .join(
              ', ',
            )}), which do not show the StatefulSet is anyone's own: pruning it needs ${
            pvcPrunerUnownedPrunePermission.name
          } (or give the StatefulSet a backstage.io/kubernetes-id label and its entity that annotation)`,
        );
    }
    await this.deps.namespaceOwners.check(
      options.gateway,
      statefulSet.metadata?.namespace ?? '',
      claimants,
    );
    return { claimants: all, present: refs };
  }
}
