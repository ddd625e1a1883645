import { KeptPvc, StatefulSetOrphans } from './types';

/**
 * Why a claim is kept, as a sentence for people, e.g. "mounted by pod web-3
 * (terminating)". The scan sends reasons as data (a StatefulSet can keep
 * thousands of claims); both the card and the prune job's skip reasons
 * word them here.
 *
 * @public
 */
export function describeKept(
  pvc: KeptPvc,
  statefulSet: Pick<StatefulSetOrphans, 'name' | 'ordinals'>,
): string {
  switch (pvc.reason) {
    case 'ordinal-in-use': {
      const { start, end } = statefulSet.ordinals;
      return `ordinal ${pvc.ordinal} is one the StatefulSet runs (${start}–${
        end - 1
      })`;
    }
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
    default:
      return pvc.reason;
  }
}
