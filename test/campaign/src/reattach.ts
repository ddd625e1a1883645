/**
 * Which StatefulSets of a deleted claim's name would have reattached it at
 * the instant of its delete, by the simulator's record of that instant.
 *
 * The StatefulSet controller creates pod `<name>-<ordinal>` for every
 * ordinal it runs, and the pod mounts claim `<template>-<name>-<ordinal>`
 * of each volumeClaimTemplate, whatever StatefulSet (by uid) first made
 * that claim: a StatefulSet deleted and re-created under its name takes
 * its claims back. A claim is reattached by a StatefulSet of its name that
 * is not being deleted (the controller does nothing for one that is) and
 * names it by a template and a canonical ordinal, when that StatefulSet
 * runs the ordinal, or would run it again by scaling up under the rules the
 * plugin keeps claims by: it is paused (0 replicas, under
 * `pausedStatefulSets: keep`), or an autoscaler targeting it may scale it up
 * to the ordinal.
 */
import type { ClaimDeletion } from 'kube-sim';

export interface Reattachment {
  statefulSet: string;
  uid: string;
  /** Why it would reattach the claim. */
  reason: string;
  /** Since when, without a break, it would have (the earliest reason). */
  since: number;
  /** When this StatefulSet (this uid) appeared. */
  existsSince: number;
}

const CANONICAL_ORDINAL = /^(0|[1-9][0-9]*)$/;

/** The ordinal by which the StatefulSet `sts` names the claim through one of its templates, if it does. */
export function ordinalNaming(
  claim: string,
  sts: { name: string; templates: string[] },
): number | undefined {
  for (const template of sts.templates) {
    const prefix = `${template}-${sts.name}-`;
    const rest = claim.startsWith(prefix) ? claim.slice(prefix.length) : '';
    if (CANONICAL_ORDINAL.test(rest)) return Number(rest);
  }
  return undefined;
}

/** The StatefulSets that would have reattached the deleted claim when its delete arrived. */
export function reattachingStatefulSets(
  d: ClaimDeletion,
  pausedKeeps: boolean,
): Reattachment[] {
  const claim = d.request.name ?? '';
  const found: Reattachment[] = [];
  for (const sts of d.statefulSets) {
    if (sts.deleting) continue;
    const ordinal = ordinalNaming(claim, sts);
    if (ordinal === undefined) continue;
    const reasons: Array<{ reason: string; since: number }> = [
      ...d.runningOrdinalOf
        .filter(r => r.statefulSet === sts.name)
        .map(r => ({ reason: `runs ordinal ${ordinal}`, since: r.since })),
      ...(pausedKeeps && sts.pausedSince !== undefined
        ? [
            {
              reason: 'is paused (0 replicas): scaling it up brings it back',
              since: sts.pausedSince,
            },
          ]
        : []),
      ...d.autoscaledOrdinalOf
        .filter(a => a.statefulSet === sts.name)
        .map(a => ({
          reason: `may be scaled up to ordinal ${ordinal} by HorizontalPodAutoscaler ${a.autoscaler} (maxReplicas ${a.maxReplicas})`,
          since: a.since,
        })),
    ];
    if (reasons.length === 0) continue;
    found.push({
      statefulSet: sts.name,
      uid: sts.uid,
      reason: reasons.map(r => r.reason).join('; '),
      since: Math.min(...reasons.map(r => r.since)),
      existsSince: sts.existsSince ?? 0,
    });
  }
  return found;
}
