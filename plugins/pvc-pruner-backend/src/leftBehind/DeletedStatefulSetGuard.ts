import type { V1StatefulSet } from '@kubernetes/client-node';
import type { SubjectGuard, SubjectGuardFactory } from '../jobs';
import { ClusterRequestError, KubeGateway } from '../kubernetes';

/** StatefulSet names watched per job: the deleted one's and the other readings of its claims' names. */
const MAX_WATCHED_NAMES = 11;

/**
 * What a prune of a deleted StatefulSet's claims guards: that no
 * StatefulSet of its name exists again, nor one of a name its claims'
 * names also read as (`otherNames`: `data-orders-db-0` is also ordinal 0
 * of `db`, template `data-orders`). Its live reads before each delete must
 * all answer 404, and a watch on each name stops the job before its next
 * delete once one appears (the name's Lease keeps a prune of the new one
 * from running beside it). Its StatefulSet is the deleted one, at 0
 * replicas, which nothing scales up: its claims are judged so.
 */
export class DeletedStatefulSetGuard implements SubjectGuard {
  abortReason?: string;
  readonly pausedStatefulSets = 'offer' as const;
  private readonly stopWatches: Array<() => void> = [];
  private readonly namespace: string;
  private readonly name: string;

  private constructor(
    readonly current: V1StatefulSet,
    private readonly names: string[],
  ) {
    this.namespace = current.metadata?.namespace ?? '';
    this.name = current.metadata?.name ?? '';
  }

  /** Starts the guard for this deleted StatefulSet (see deletedStatefulSet) and the other names its claims read as. */
  static of(
    deleted: V1StatefulSet,
    otherNames: readonly string[] = [],
  ): SubjectGuardFactory {
    return {
      start: async (gateway, namespace, name) => {
        if (
          deleted.metadata?.namespace !== namespace ||
          deleted.metadata?.name !== name
        )
          throw new Error(
            `the job is for StatefulSet ${namespace}/${name}, not ${deleted.metadata?.namespace}/${deleted.metadata?.name}`,
          );
        const names = [...new Set([name, ...otherNames])].slice(
          0,
          MAX_WATCHED_NAMES,
        );
        const guard = new DeletedStatefulSetGuard(deleted, names);
        try {
          for (const watched of names)
            guard.stopWatches.push(await guard.watch(gateway, watched));
          await guard.confirmLive(gateway);
        } catch (e) {
          guard.stop();
          throw e;
        }
        return guard;
      },
    };
  }

  /** Watched from now: a StatefulSet that exists is sent as added. */
  private watch(gateway: KubeGateway, name: string) {
    const label = `StatefulSet ${this.namespace}/${name}`;
    return gateway.watchOne<V1StatefulSet>(
      'statefulsets',
      { namespace: this.namespace, name },
      undefined,
      event => {
        if (event.type === 'BOOKMARK' || event.type === 'DELETED') return;
        if (event.type === 'ERROR') {
          this.abort(`the watch on the name ${label} failed`);
          return;
        }
        this.appeared(name);
      },
      error =>
        this.abort(
          `the watch on the name ${label} ended${
            error ? ` (${error.message})` : ''
          }, so its creation could go unseen`,
        ),
    );
  }

  /** Reads every watched name from the API server: only 404s let a delete go out. */
  async confirmLive(gateway: KubeGateway): Promise<void> {
    const found = await Promise.all(
      this.names.map(async name => {
        try {
          await gateway.readStatefulSet(this.namespace, name);
          return name;
        } catch (e) {
          if (e instanceof ClusterRequestError && e.statusCode === 404)
            return undefined;
          throw e;
        }
      }),
    );
    for (const name of found) if (name) this.appeared(name);
  }

  private appeared(name: string) {
    const label = `StatefulSet ${this.namespace}/${name}`;
    this.abort(
      name === this.name
        ? `a ${label} exists again (created under the deleted one's name), and may attach these claims`
        : `a ${label} exists, a name these claims' names also read as, and may attach them`,
    );
  }

  private abort(reason: string) {
    this.abortReason ??= reason;
  }

  stop() {
    for (const stopWatch of this.stopWatches) stopWatch();
  }
}
