import type {
  V1PersistentVolumeClaim,
  V1Pod,
  V1StatefulSet,
} from '@kubernetes/client-node';
import type {
  LeftBehindEvidence,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import type { KnownAutoscalers } from '../autoscaling';
import { type ClaimLineage, unverifiedOwnerReason } from '../lineage';
import { NamespaceSnapshot } from '../orphans/orphanRule';
import { MAX_CLAIMANTS } from '../ownership/ClaimantIndex';
import {
  claimNameParses,
  classifyLeftBehind,
  deletedStatefulSet,
} from './leftBehindRule';

/** Claims listed per group, as many as one prune request may name. */
export const MAX_GROUP_CLAIMS = 1000;
/** Labels named as evidence. */
const MAX_EVIDENCE_LABELS = 20;
/** Other parses named as evidence. */
const MAX_OTHER_PARSES = 10;

/** One namespace as read for the claims deleted StatefulSets left there. */
export interface LeftBehindInput {
  namespace: string;
  /** The namespace's claims, with their labels. */
  claims: V1PersistentVolumeClaim[];
  /** The namespace's pods, terminating ones included. */
  pods: V1Pod[];
  /** The namespace's StatefulSets, as they exist now. */
  statefulSets: V1StatefulSet[];
  /** The recorded lineage of the namespace's claims, by claim uid. */
  lineage: ReadonlyMap<string, ClaimLineage>;
  autoscalers: KnownAutoscalers;
  /** The entities whose selectors (and scope) match a claim's labels, by ref; at most MAX_CLAIMANTS + 1. */
  claimantsByLabels: (labels: Record<string, string>) => string[];
  /** The recorded claimants of a lineage whose entity is gone from the catalog or was re-created (unverifiedClaimants). */
  unverifiedOf: (lineage: ClaimLineage) => string[];
}

/** The claims one deleted StatefulSet left behind, before costs. */
export interface FoundGroup {
  namespace: string;
  statefulSet: { name: string; uid?: string };
  evidence: LeftBehindEvidence;
  lastSeenAt?: string;
  /** Sorted entity refs; at most MAX_CLAIMANTS + 1. */
  claimants: string[];
  /** Recorded claimants the catalog no longer has, sorted (set by the finder, which reads the catalog). */
  claimantsNotInCatalog?: string[];
  /** More claimants than anyone may be checked on, or a recorded list that is not whole: shown to and pruned by nobody. */
  crowded: boolean;
  /**
   * Recorded claimants whose entity is gone from the catalog or was
   * re-created: their refs give no right, and the claims are also the
   * platform's (`pvc-pruner.unowned.prune`). Sorted; absent when none.
   */
  unverifiedClaimants?: string[];
  /** Why the platform is needed, when `unverifiedClaimants` says so. */
  ownerNotice?: string;
  /** The catalog uid each recorded claimant had when recorded, by ref (never on the wire). */
  recordedUids?: Record<string, string>;
  nameEvidence?: {
    template: string;
    labels: Record<string, string>;
    otherParses: Array<{ template: string; statefulSet: string }>;
  };
  /** The deleted StatefulSet's claims, judged by the orphan rule: only `orphans`. */
  report: StatefulSetOrphans;
}

/**
 * The group's claimants whose ref stands for the entity that claimed the
 * claims: the unverified recorded ones give no right and need none on
 * whoever holds their ref now (the group then needs the platform's
 * unowned permissions instead).
 */
export function verifiedClaimants(
  group: Pick<FoundGroup, 'claimants' | 'unverifiedClaimants'>,
): string[] {
  const unverified = new Set(group.unverifiedClaimants ?? []);
  return group.claimants.filter(ref => !unverified.has(ref));
}

/** Whether no verified claimant claims the group: the platform's, on the fleet page's Unowned section. */
export function isUnowned(
  group: Pick<FoundGroup, 'claimants' | 'unverifiedClaimants' | 'crowded'>,
): boolean {
  return !group.crowded && verifiedClaimants(group).length === 0;
}

const labelsOf = (c: V1PersistentVolumeClaim) => c.metadata?.labels ?? {};

/**
 * Whether an owner other than a deleted StatefulSet holds the claim: any
 * object but a StatefulSet (an operator's resource, such as a CloudNativePG
 * Cluster that keeps its claims while hibernated, or the pod of a generic
 * ephemeral volume), or a StatefulSet that exists. Such a claim was not
 * left behind; its owner, or the garbage collector, deals with it.
 */
function heldByAnOwner(
  claim: V1PersistentVolumeClaim,
  liveUids: ReadonlySet<string | undefined>,
): boolean {
  return (claim.metadata?.ownerReferences ?? []).some(
    owner =>
      owner.kind !== 'StatefulSet' ||
      !owner.apiVersion?.startsWith('apps/') ||
      liveUids.has(owner.uid),
  );
}

/** The labels every claim carries with the same value. */
function commonLabels(claims: V1PersistentVolumeClaim[]) {
  const [first, ...rest] = claims.map(labelsOf);
  const common: Record<string, string> = {};
  for (const [k, v] of Object.entries(first ?? {}).sort()) {
    if (Object.keys(common).length >= MAX_EVIDENCE_LABELS) break;
    if (rest.every(l => l[k] === v)) common[k] = v;
  }
  return common;
}

function unionClaimants(
  recorded: string[],
  claims: V1PersistentVolumeClaim[],
  byLabels: LeftBehindInput['claimantsByLabels'],
): string[] {
  const refs = new Set(recorded);
  for (const claim of claims) {
    if (refs.size > MAX_CLAIMANTS) break;
    for (const ref of byLabels(labelsOf(claim))) refs.add(ref);
  }
  return [...refs].sort().slice(0, MAX_CLAIMANTS + 1);
}

/** The report with only the given claims' orphans, at most MAX_GROUP_CLAIMS, and nothing kept. */
function onlyClaims(
  report: StatefulSetOrphans,
  uids: ReadonlySet<string>,
): StatefulSetOrphans {
  const orphans = report.orphans
    .filter(o => uids.has(o.uid))
    .slice(0, MAX_GROUP_CLAIMS);
  return { ...report, orphans, inUse: [], kept: [] };
}

/**
 * The claims deleted StatefulSets left in one namespace, grouped by
 * StatefulSet. With lineage: a claim whose lineage names a StatefulSet
 * (by uid) that no longer exists, when no StatefulSet of that name exists
 * now, nothing but a deleted StatefulSet owns it (one created again is judged by the orphan rule instead), no pod
 * references it and it is not being deleted. Without lineage: a claim whose
 * name reads as `<template>-<name>-<ordinal>` under no existing
 * StatefulSet, in any of the ways it reads, whose labels some entity's
 * selector matches, under the same tests; the first reading (shortest
 * template) names the group, and the others are said.
 */
export function leftBehindIn(input: LeftBehindInput): FoundGroup[] {
  const { namespace } = input;
  const snapshot = NamespaceSnapshot.of(
    namespace,
    input.claims,
    input.pods,
    input.statefulSets,
  );
  const liveNames = new Set(input.statefulSets.map(s => s.metadata?.name));
  const liveUids = new Set(input.statefulSets.map(s => s.metadata?.uid));
  const byUid = new Map<
    string,
    Array<{ claim: V1PersistentVolumeClaim; lineage: ClaimLineage }>
  >();
  const unrecorded: V1PersistentVolumeClaim[] = [];
  for (const claim of input.claims) {
    if (claim.metadata?.namespace !== namespace) continue;
    if (heldByAnOwner(claim, liveUids)) continue;
    const lineage = input.lineage.get(claim.metadata?.uid ?? '');
    if (!lineage) {
      unrecorded.push(claim);
      continue;
    }
    const sts = lineage.statefulSet;
    if (
      lineage.namespace !== namespace ||
      lineage.claimName !== claim.metadata?.name ||
      liveUids.has(sts.uid) ||
      liveNames.has(sts.name)
    )
      continue;
    const list = byUid.get(sts.uid) ?? [];
    list.push({ claim, lineage });
    byUid.set(sts.uid, list);
  }
  const groups: FoundGroup[] = [];
  for (const [uid, members] of byUid) {
    const name = members[0].lineage.statefulSet.name;
    const ghost = deletedStatefulSet({
      namespace,
      name,
      uid,
      templates: members.map(m => m.lineage.template),
    });
    const report = onlyClaims(
      classifyLeftBehind(ghost, snapshot, new Map(), input.autoscalers),
      new Set(members.map(m => m.lineage.claimUid)),
    );
    if (report.orphans.length === 0) continue;
    const claimants = unionClaimants(
      members.flatMap(m => m.lineage.claimants),
      members.map(m => m.claim),
      input.claimantsByLabels,
    );
    const unverified = [
      ...new Set(members.flatMap(m => input.unverifiedOf(m.lineage))),
    ].sort();
    groups.push({
      namespace,
      statefulSet: { name, uid },
      evidence: 'lineage',
      recordedUids: Object.assign(
        {},
        ...members.map(m => m.lineage.claimantUids),
      ),
      ...(unverified.length > 0
        ? {
            unverifiedClaimants: unverified,
            ownerNotice: unverifiedOwnerReason(unverified, 'prune'),
          }
        : {}),
      lastSeenAt: members
        .map(m => m.lineage.lastSeenAt)
        .sort()
        .at(-1),
      claimants,
      crowded:
        members.some(m => m.lineage.claimantsCrowded) ||
        claimants.length > MAX_CLAIMANTS,
      report,
    });
  }
  groups.push(...unrecordedGroups(input, snapshot, liveNames, unrecorded));
  return groups.sort(
    (a, b) =>
      a.statefulSet.name.localeCompare(b.statefulSet.name) ||
      a.evidence.localeCompare(b.evidence),
  );
}

function unrecordedGroups(
  input: LeftBehindInput,
  snapshot: NamespaceSnapshot,
  liveNames: ReadonlySet<string | undefined>,
  claims: V1PersistentVolumeClaim[],
): FoundGroup[] {
  const byName = new Map<
    string,
    {
      claims: V1PersistentVolumeClaim[];
      templates: Set<string>;
      others: Map<string, { template: string; statefulSet: string }>;
    }
  >();
  const nobody: V1StatefulSet = { metadata: { name: '' } };
  for (const claim of claims) {
    const name = claim.metadata?.name ?? '';
    if (Object.keys(labelsOf(claim)).length === 0) continue;
    const parses = claimNameParses(name);
    if (parses.length === 0) continue;
    // Under no reading may a StatefulSet that exists attach it.
    if (parses.some(p => liveNames.has(p.statefulSet))) continue;
    if (snapshot.alsoNamedBy(name, nobody).length > 0) continue;
    if (input.claimantsByLabels(labelsOf(claim)).length === 0) continue;
    const [chosen, ...others] = parses;
    const group = byName.get(chosen.statefulSet) ?? {
      claims: [] as V1PersistentVolumeClaim[],
      templates: new Set<string>(),
      others: new Map(),
    };
    group.claims.push(claim);
    group.templates.add(chosen.template);
    for (const o of others)
      group.others.set(`${o.template}\n${o.statefulSet}`, {
        template: o.template,
        statefulSet: o.statefulSet,
      });
    byName.set(chosen.statefulSet, group);
  }
  const groups: FoundGroup[] = [];
  for (const [name, group] of byName) {
    const ghost = deletedStatefulSet({
      namespace: input.namespace,
      name,
      templates: [...group.templates],
    });
    const report = onlyClaims(
      classifyLeftBehind(ghost, snapshot, new Map(), input.autoscalers),
      new Set(group.claims.map(c => c.metadata?.uid ?? '')),
    );
    if (report.orphans.length === 0) continue;
    const claimants = unionClaimants([], group.claims, input.claimantsByLabels);
    groups.push({
      namespace: input.namespace,
      statefulSet: { name },
      evidence: 'name-and-labels',
      claimants,
      crowded: claimants.length > MAX_CLAIMANTS,
      nameEvidence: {
        template: [...group.templates].sort().join(', '),
        labels: commonLabels(group.claims),
        otherParses: [...group.others.values()].slice(0, MAX_OTHER_PARSES),
      },
      report,
    });
  }
  return groups;
}
