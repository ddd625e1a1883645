import { InUsePvcs, KeptPvc, StatefulSetOrphans } from './types';

/**
 * What {@link describeInUse} and {@link describeKept} need of a StatefulSet.
 *
 * @public
 */
export type StatefulSetNaming = Pick<StatefulSetOrphans, 'name' | 'ordinals'>;

/**
 * Ascending ordinals as ranges, e.g. [0, 1, 2, 5] → "0–2, 5".
 *
 * @public
 */
export function formatOrdinals(ordinals: number[]): string {
  const ranges: string[] = [];
  for (let i = 0; i < ordinals.length; i++) {
    const first = ordinals[i];
    while (ordinals[i + 1] === ordinals[i] + 1) i++;
    ranges.push(first === ordinals[i] ? `${first}` : `${first}–${ordinals[i]}`);
  }
  return ranges.join(', ');
}

/**
 * Why claims of running ordinals are kept, as a sentence for people, e.g.
 * "ordinals 0–2 are ones the StatefulSet runs (0–2)".
 *
 * @public
 */
export function describeInUse(
  group: Pick<InUsePvcs, 'ordinals'>,
  statefulSet: StatefulSetNaming,
): string {
  const { start, end } = statefulSet.ordinals;
  const running = `(${start}–${end - 1})`;
  return group.ordinals.length === 1
    ? `ordinal ${group.ordinals[0]} is one the StatefulSet runs ${running}`
    : `ordinals ${formatOrdinals(
        group.ordinals,
      )} are ones the StatefulSet runs ${running}`;
}

/**
 * Why a claim is kept, as a sentence for people, e.g. "mounted by pod web-3
 * (terminating)". The scan sends reasons as data; both the card and the prune
 * job's skip reasons word them here.
 *
 * @public
 */
export function describeKept(
  pvc: KeptPvc,
  statefulSet: StatefulSetNaming,
): string {
  switch (pvc.reason) {
    case 'mounted-by-pod':
      return `mounted by pod ${(pvc.pods ?? [])
        .map(p => `${p.name}${p.terminating ? ' (terminating)' : ''}`)
        .join(', ')}`;
    case 'not-an-ordinal': {
      const prefix = `${pvc.template}-${statefulSet.name}-`;
      return `"${pvc.name.slice(
        prefix.length,
      )}" after "${prefix}" is not an ordinal of this StatefulSet`;
    }
    case 'terminating':
      return `already being deleted, still terminating (${describeFinalizers(
        pvc.finalizers ?? [],
      )})`;
    case 'paused':
      return `${statefulSet.name} is scaled to 0 replicas (paused), and scaling it up again reattaches its claims, data and all`;
    case 'autoscaler-range': {
      const hpa = `HorizontalPodAutoscaler ${pvc.autoscaler?.name ?? ''}`;
      const max = pvc.autoscaler?.maxReplicas;
      return max === undefined
        ? `${hpa} targets ${statefulSet.name} with a maxReplicas that is not a replica count, so it could scale it up to any of its claims`
        : `${hpa} may scale ${statefulSet.name} up to ${max} replicas, which reattaches the claims of ordinals below ${
            statefulSet.ordinals.start + max
          }`;
    }
    case 'autoscalers-unreadable':
      return `the HorizontalPodAutoscalers of its namespace could not be read (${
        pvc.autoscalersError ?? 'no reason given'
      }), so one might scale ${
        statefulSet.name
      } up and reattach its claims; pvc-pruner needs list and watch on horizontalpodautoscalers (rbac/pvc-pruner-rbac.yaml)`;
    case 'name-also-fits':
      return `its name is also that of a claim of ${(pvc.alsoNamedBy ?? [])
        .map(n => `StatefulSet ${n.statefulSet} (template ${n.template})`)
        .join(', ')}, so its name cannot tell whose it is; it is kept`;
    default:
      return pvc.reason;
  }
}

/**
 * "held by a, b" for the finalizers keeping a claim Terminating.
 *
 * @public
 */
export function describeFinalizers(finalizers: string[]): string {
  return finalizers.length > 0
    ? `held by ${finalizers.join(', ')}`
    : 'held until the API server finishes its deletion';
}
