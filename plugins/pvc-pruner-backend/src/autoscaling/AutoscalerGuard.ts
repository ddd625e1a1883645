import type {
  V1StatefulSet,
  V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import { KubeGateway } from '../kubernetes';
import {
  hpaAsTheRuleReadsIt,
  maxReplicasOf,
  nameOf,
  targetsStatefulSet,
} from './autoscalerReach';

/** "up to 8 replicas", or what an HPA without a replica count as maxReplicas means. */
function reachOf(hpa: V2HorizontalPodAutoscaler) {
  const max = maxReplicasOf(hpa);
  return max === undefined
    ? 'with a maxReplicas that is not a replica count, so it may reach any ordinal'
    : `up to ${max} replicas`;
}

/** "4", or "no replica count" for a maxReplicas that is none. */
function maxOf(hpa: V2HorizontalPodAutoscaler) {
  return String(maxReplicasOf(hpa) ?? 'no replica count');
}

/** Whether `now` may scale farther than `before`: a larger maxReplicas, or one that is no longer a replica count. */
function reachesFarther(
  before: V2HorizontalPodAutoscaler,
  now: V2HorizontalPodAutoscaler,
) {
  const was = maxReplicasOf(before);
  const is = maxReplicasOf(now);
  if (was === undefined) return false;
  return is === undefined || is > was;
}

/**
 * Lists the HorizontalPodAutoscalers of a StatefulSet's namespace and
 * watches them from the list's resourceVersion, so no change between the
 * list and the watch goes unseen. `abortReason` is set when an HPA that
 * targets the StatefulSet appears (created, or retargeted to it), when the
 * maxReplicas of one that targets it rises, or when the watch fails or
 * ends: a claim inside an autoscaler's range may then be needed again.
 * Lowering or deleting an HPA only shrinks the range, and is no reason.
 */
export class AutoscalerGuard {
  abortReason?: string;
  private stopWatch: () => void = () => {};
  /** The namespace's HPAs by name, as last seen. */
  private readonly seen = new Map<string, V2HorizontalPodAutoscaler>();
  /** Only the identity targetsStatefulSet compares. */
  private readonly statefulSet: V1StatefulSet;
  private readonly label: string;

  private constructor(
    private readonly namespace: string,
    statefulSetName: string,
    initial: V2HorizontalPodAutoscaler[],
  ) {
    this.statefulSet = { metadata: { namespace, name: statefulSetName } };
    this.label = `StatefulSet ${namespace}/${statefulSetName}`;
    for (const hpa of initial) this.seen.set(hpa.metadata?.name ?? '', hpa);
  }

  static async start(
    gateway: KubeGateway,
    namespace: string,
    statefulSetName: string,
  ): Promise<AutoscalerGuard> {
    const { items, resourceVersion } = await gateway.listAutoscalers(
      namespace,
      hpaAsTheRuleReadsIt,
    );
    const guard = new AutoscalerGuard(namespace, statefulSetName, items);
    const watched = `the watch on the HorizontalPodAutoscalers of namespace ${namespace}`;
    guard.stopWatch = await gateway.watchAutoscalers(
      namespace,
      resourceVersion,
      event => {
        if (event.type === 'BOOKMARK') return;
        if (event.type === 'ERROR') {
          guard.abort(
            `${watched} failed: ${
              (event.object as { message?: string })?.message ?? 'unknown error'
            }`,
          );
          return;
        }
        const hpa = hpaAsTheRuleReadsIt(event.object);
        if (event.type === 'DELETED') guard.forget(hpa);
        else guard.observe(hpa);
      },
      error =>
        guard.abort(
          `${watched} ended${
            error ? ` (${error.message})` : ''
          }, so a new or raised autoscaler of ${guard.label} could go unseen`,
        ),
    );
    return guard;
  }

  /** The HPAs that target the StatefulSet now, as last seen (for the re-check's orphan rule). */
  get autoscalers(): V2HorizontalPodAutoscaler[] {
    return [...this.seen.values()].filter(hpa =>
      targetsStatefulSet(hpa, this.statefulSet),
    );
  }

  /**
   * Lists the HPAs from the API server: the last check before a delete,
   * since the watch may not have brought yet a change the server already
   * has. Fails as the list fails (a refusal, a timeout).
   */
  async confirmLive(gateway: KubeGateway): Promise<void> {
    const { items } = await gateway.listAutoscalers(
      this.namespace,
      hpaAsTheRuleReadsIt,
    );
    const live = new Set(items.map(hpa => hpa.metadata?.name ?? ''));
    for (const name of [...this.seen.keys()])
      if (!live.has(name)) this.seen.delete(name);
    for (const hpa of items) this.observe(hpa);
  }

  /** A newer state of an HPA of the namespace. */
  private observe(hpa: V2HorizontalPodAutoscaler) {
    const name = hpa.metadata?.name ?? '';
    let before = this.seen.get(name);
    // Deleted and created again under its name since it was last seen: a new HPA.
    if (before && before.metadata?.uid !== hpa.metadata?.uid)
      before = undefined;
    this.seen.set(name, hpa);
    if (!targetsStatefulSet(hpa, this.statefulSet)) return;
    const it = `HorizontalPodAutoscaler ${this.namespace}/${nameOf(hpa)}`;
    if (!before) {
      this.abort(
        `${it} was created during the job and scales ${this.label} ${reachOf(
          hpa,
        )}`,
      );
    } else if (!targetsStatefulSet(before, this.statefulSet)) {
      this.abort(
        `${it} was changed during the job to scale ${this.label} ${reachOf(
          hpa,
        )}`,
      );
    } else if (reachesFarther(before, hpa)) {
      this.abort(
        `${it} raised the maxReplicas of ${this.label} from ${maxOf(
          before,
        )} to ${maxOf(hpa)} during the job`,
      );
    }
  }

  private forget(hpa: V2HorizontalPodAutoscaler) {
    const name = hpa.metadata?.name ?? '';
    if (this.seen.get(name)?.metadata?.uid === hpa.metadata?.uid)
      this.seen.delete(name);
  }

  private abort(reason: string) {
    this.abortReason ??= reason;
  }

  stop() {
    this.stopWatch();
  }
}
