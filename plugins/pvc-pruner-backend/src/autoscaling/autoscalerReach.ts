import type {
  V1StatefulSet,
  V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';

/** The largest replica count Kubernetes stores (an int32). */
const MAX_REPLICAS = 2 ** 31 - 1;
/** The longest object name kube-apiserver admits (a DNS subdomain). */
const MAX_NAME_LENGTH = 253;

/** The HorizontalPodAutoscalers of a namespace could not be read, and why. */
export interface AutoscalersUnreadable {
  unreadable: string;
}

/**
 * What is known of the HorizontalPodAutoscalers that may scale a
 * StatefulSet: the HPAs (of its namespace, or only those that target it),
 * or why they could not be read.
 */
export type KnownAutoscalers =
  | readonly V2HorizontalPodAutoscaler[]
  | AutoscalersUnreadable;

export function isUnreadable(
  known: KnownAutoscalers,
): known is AutoscalersUnreadable {
  return 'unreadable' in known;
}

/** The HPA's name as answers and messages show it: at most as long as kube-apiserver allows a name to be. */
export function nameOf(hpa: V2HorizontalPodAutoscaler): string {
  return String(hpa.metadata?.name ?? '').slice(0, MAX_NAME_LENGTH);
}

/** The HPA with only the fields pvc-pruner reads: who it is, what it scales, and how far. */
export function hpaAsTheRuleReadsIt(
  hpa: V2HorizontalPodAutoscaler,
): V2HorizontalPodAutoscaler {
  const { metadata, spec } = hpa;
  const ref = spec?.scaleTargetRef;
  return {
    metadata: metadata && {
      name: metadata.name,
      namespace: metadata.namespace,
      uid: metadata.uid,
      resourceVersion: metadata.resourceVersion,
    },
    spec: spec && {
      scaleTargetRef: ref && {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        name: ref.name,
      },
      minReplicas: spec.minReplicas,
      maxReplicas: spec.maxReplicas,
    },
  } as V2HorizontalPodAutoscaler;
}

/**
 * Whether the HPA scales this StatefulSet: same namespace, and a
 * scaleTargetRef of kind StatefulSet in group `apps` with its name. The HPA
 * controller resolves the target by group and kind, so any `apps/…` version
 * counts.
 */
export function targetsStatefulSet(
  hpa: V2HorizontalPodAutoscaler,
  sts: V1StatefulSet,
): boolean {
  const ref = hpa.spec?.scaleTargetRef;
  return (
    hpa.metadata?.namespace === sts.metadata?.namespace &&
    ref?.kind === 'StatefulSet' &&
    typeof ref.name === 'string' &&
    ref.name === sts.metadata?.name &&
    typeof ref.apiVersion === 'string' &&
    ref.apiVersion.startsWith('apps/')
  );
}

/** The HPAs among `hpas` that target the StatefulSet. */
export function autoscalersOf(
  sts: V1StatefulSet,
  hpas: readonly V2HorizontalPodAutoscaler[],
): V2HorizontalPodAutoscaler[] {
  return hpas.filter(hpa => targetsStatefulSet(hpa, sts));
}

/**
 * The HPA's maxReplicas when it is a replica count (an integer from 1 to
 * 2^31-1, as kube-apiserver admits); undefined for anything else a broken
 * or hostile API server may send.
 */
export function maxReplicasOf(
  hpa: V2HorizontalPodAutoscaler,
): number | undefined {
  const max: unknown = hpa.spec?.maxReplicas;
  return typeof max === 'number' &&
    Number.isInteger(max) &&
    max >= 1 &&
    max <= MAX_REPLICAS
    ? max
    : undefined;
}

/** How far the autoscalers of a StatefulSet may scale it. */
export interface AutoscalerReach {
  /** The HPA that reaches farthest (the largest maxReplicas, or one whose maxReplicas is no replica count). */
  name: string;
  /** Its maxReplicas; undefined when that is not a replica count. */
  maxReplicas?: number;
  /** Claims of ordinals below this are kept: `ordinals.start + maxReplicas`, or Infinity. */
  end: number;
}

/**
 * How far the HPAs that target a StatefulSet whose first ordinal is `start`
 * may scale it; undefined when none does. Of several, the largest
 * maxReplicas wins (ties: the first name). An HPA whose maxReplicas is not a
 * replica count could mean anything, so it reaches every ordinal.
 */
export function autoscalerReach(
  targeting: readonly V2HorizontalPodAutoscaler[],
  start: number,
): AutoscalerReach | undefined {
  let farthest: AutoscalerReach | undefined;
  for (const hpa of targeting) {
    const name = nameOf(hpa);
    const maxReplicas = maxReplicasOf(hpa);
    // A first ordinal that is no integer (a broken StatefulSet) bounds nothing either.
    const reach: AutoscalerReach =
      maxReplicas === undefined
        ? { name, end: Infinity }
        : {
            name,
            maxReplicas,
            end: Number.isSafeInteger(start) ? start + maxReplicas : Infinity,
          };
    if (
      !farthest ||
      reach.end > farthest.end ||
      (reach.end === farthest.end && name < farthest.name)
    )
      farthest = reach;
  }
  return farthest;
}
