import type { V1StatefulSet } from '@kubernetes/client-node';
import type { SubjectGuard, SubjectGuardFactory } from '../jobs';
import { ClusterRequestError, KubeGateway } from '../kubernetes';

/**
 * What a prune of a deleted StatefulSet's claims guards: that no
 * StatefulSet of its name exists again. Its live read before each delete
 * must answer 404, and a watch on the name stops the job before its next
 * delete once one appears (the name's Lease keeps a prune of the new one
 * from running beside it). Its StatefulSet is the deleted one, at 0
 * replicas, which nothing scales up: its claims are judged so.
 */
export class DeletedStatefulSetGuard implements SubjectGuard {
  abortReason?: string;
  readonly pausedStatefulSets = 'offer' as const;
  private stopWatch: () => void = () => {};
  private readonly label: string;

  private constructor(readonly current: V1StatefulSet) {
    this.label = `StatefulSet ${current.metadata?.namespace}/${current.metadata?.name}`;
  }

  /** Starts the guard for this deleted StatefulSet (see deletedStatefulSet). */
  static of(deleted: V1StatefulSet): SubjectGuardFactory {
    return {
      start: async (gateway, namespace, name) => {
        if (
          deleted.metadata?.namespace !== namespace ||
          deleted.metadata?.name !== name
        )
          throw new Error(
            `the job is for StatefulSet ${namespace}/${name}, not ${deleted.metadata?.namespace}/${deleted.metadata?.name}`,
          );
        const guard = new DeletedStatefulSetGuard(deleted);
        // Watched from now: a StatefulSet that exists is sent as added.
        guard.stopWatch = await gateway.watchOne<V1StatefulSet>(
          'statefulsets',
          { namespace, name },
          undefined,
          event => {
            if (event.type === 'BOOKMARK' || event.type === 'DELETED') return;
            if (event.type === 'ERROR') {
              guard.abort(`the watch on the name ${guard.label} failed`);
              return;
            }
            guard.appeared();
          },
          error =>
            guard.abort(
              `the watch on the name ${guard.label} ended${
                error ? ` (${error.message})` : ''
              }, so its creation could go unseen`,
            ),
        );
        await guard.confirmLive(gateway);
        return guard;
      },
    };
  }

  /** Reads the name from the API server: a 404 is the only answer that lets a delete go out. */
  async confirmLive(gateway: KubeGateway): Promise<void> {
    const { namespace = '', name = '' } = this.current.metadata ?? {};
    try {
      await gateway.readStatefulSet(namespace, name);
    } catch (e) {
      if (e instanceof ClusterRequestError && e.statusCode === 404) return;
      throw e;
    }
    this.appeared();
  }

  private appeared() {
    this.abort(
      `a ${this.label} exists again (created under the deleted one's name), and may attach these claims`,
    );
  }

  private abort(reason: string) {
    this.abortReason ??= reason;
  }

  stop() {
    this.stopWatch();
  }
}
