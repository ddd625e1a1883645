import type { V1StatefulSet } from '@kubernetes/client-node';
import { KubeGateway } from '../kubernetes';
import { runningOrdinals } from '../orphans';

function describeOrdinals(sts: V1StatefulSet) {
  const { start, end } = runningOrdinals(sts);
  return end > start
    ? `ordinals ${start}–${end - 1}`
    : 'no ordinals (0 replicas)';
}

/**
 * Reads a StatefulSet and watches it from the resourceVersion it read, so no
 * change between the read and the watch goes unseen. Any change to the
 * ordinals it runs, its deletion, or the end of the watch sets `abortReason`.
 */
export class StatefulSetGuard {
  abortReason?: string;
  private stopWatch: () => void = () => {};

  private constructor(public current: V1StatefulSet) {}

  static async start(
    gateway: KubeGateway,
    namespace: string,
    name: string,
  ): Promise<StatefulSetGuard> {
    const guard = new StatefulSetGuard(
      await gateway.readStatefulSet(namespace, name),
    );
    const initial = runningOrdinals(guard.current);
    const label = `StatefulSet ${namespace}/${name}`;
    guard.stopWatch = await gateway.watchOne<V1StatefulSet>(
      'statefulsets',
      { namespace, name },
      guard.current.metadata?.resourceVersion,
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
        const before = guard.current;
        guard.current = event.object;
        const now = runningOrdinals(event.object);
        if (now.start !== initial.start || now.end !== initial.end) {
          guard.abort(
            `${label} changed from ${describeOrdinals(
              before,
            )} to ${describeOrdinals(event.object)} during the job`,
          );
        }
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

  private abort(reason: string) {
    this.abortReason ??= reason;
  }

  stop() {
    this.stopWatch();
  }
}
