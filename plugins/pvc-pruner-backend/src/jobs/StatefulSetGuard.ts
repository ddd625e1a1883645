import type { V1StatefulSet } from '@kubernetes/client-node';
import { ClusterRequestError, KubeGateway } from '../kubernetes';
import { runningOrdinals } from '../orphans';

function describeOrdinals(sts: V1StatefulSet) {
  const { start, end } = runningOrdinals(sts);
  return end > start
    ? `ordinals ${start}–${end - 1}`
    : 'no ordinals (0 replicas)';
}

/**
 * Reads a StatefulSet and watches it from the resourceVersion of that read
 * (a list's, which the server can watch from), so no change between the
 * read and the watch goes unseen. Any change to the ordinals it runs, its
 * deletion, or the end of the watch sets `abortReason`.
 */
export class StatefulSetGuard {
  abortReason?: string;
  private stopWatch: () => void = () => {};

  private readonly initial: V1StatefulSet;
  private readonly label: string;

  private constructor(
    public current: V1StatefulSet,
    private readonly namespace: string,
    private readonly name: string,
  ) {
    this.initial = current;
    this.label = `StatefulSet ${namespace}/${name}`;
  }

  static async start(
    gateway: KubeGateway,
    namespace: string,
    name: string,
  ): Promise<StatefulSetGuard> {
    const { statefulSet, resourceVersion } =
      await gateway.readStatefulSetToWatch(namespace, name);
    const guard = new StatefulSetGuard(statefulSet, namespace, name);
    const label = guard.label;
    guard.stopWatch = await gateway.watchOne<V1StatefulSet>(
      'statefulsets',
      { namespace, name },
      resourceVersion,
      event => {
        if (event.type === 'BOOKMARK') return;
        if (event.type === 'ERROR') {
          guard.abort(
            `the watch on ${label} failed: ${
              (event.object as { message?: string })?.message ?? 'unknown error'
            }`,
          );
          return;
        }
        if (event.type === 'DELETED') {
          guard.abort(`${label} was deleted during the job`);
          return;
        }
        guard.observe(event.object);
      },
      error =>
        guard.abort(
          `the watch on ${label} ended${
            error ? ` (${error.message})` : ''
          }, so a change could go unseen`,
        ),
    );
    return guard;
  }

  /**
   * Reads the StatefulSet from the API server: the last check before a
   * delete, since its watch may not have brought yet a change the server
   * already has (a busy process, a slow watch).
   */
  async confirmLive(gateway: KubeGateway): Promise<void> {
    let live: V1StatefulSet;
    try {
      live = await gateway.readStatefulSet(this.namespace, this.name);
    } catch (e) {
      if (e instanceof ClusterRequestError && e.statusCode === 404) {
        this.abort(`${this.label} was deleted during the job`);
        return;
      }
      throw e;
    }
    if (live.metadata?.uid !== this.initial.metadata?.uid) {
      this.abort(
        `${this.label} was deleted and created again during the job (its uid changed)`,
      );
      return;
    }
    this.observe(live);
  }

  /** A newer state of the StatefulSet: any change to the ordinals it runs aborts. */
  private observe(sts: V1StatefulSet) {
    const before = this.current;
    this.current = sts;
    const was = runningOrdinals(this.initial);
    const now = runningOrdinals(sts);
    if (now.start !== was.start || now.end !== was.end) {
      this.abort(
        `${this.label} changed from ${describeOrdinals(
          before,
        )} to ${describeOrdinals(sts)} during the job`,
      );
    }
  }

  private abort(reason: string) {
    this.abortReason ??= reason;
  }

  stop() {
    this.stopWatch();
  }
}
