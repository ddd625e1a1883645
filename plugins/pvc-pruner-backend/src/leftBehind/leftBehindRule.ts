import type { V1StatefulSet } from '@kubernetes/client-node';
import type { StatefulSetOrphans } from 'backstage-plugin-pvc-pruner-common';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { classifyInSnapshot, NamespaceSnapshot } from '../orphans/orphanRule';
import type { KnownAutoscalers } from '../autoscaling';

/** How a claim is known to be a deleted StatefulSet's: its recorded lineage, or only its name and labels. */
export type LeftBehindEvidence = 'lineage' | 'name-and-labels';

/** Canonical decimal ordinals, as the StatefulSet controller writes them. */
const ORDINAL = /^(0|[1-9][0-9]*)$/;
/** Parses tried per name: a name of 253 characters has at most this many dashes that matter. */
const MAX_PARSES = 20;

/** One way to read a claim name as `<template>-<statefulSet>-<ordinal>`. */
export interface ClaimNameParse {
  template: string;
  statefulSet: string;
  ordinal: number;
}

/**
 * Every way the name reads as `<template>-<statefulSet>-<ordinal>`: template
 * and StatefulSet names may both contain dashes, so `data-orders-db-0` is
 * template `data` of `orders-db` or template `data-orders` of `db`. Shortest
 * template first; at most MAX_PARSES.
 */
export function claimNameParses(name: string): ClaimNameParse[] {
  const cut = name.lastIndexOf('-');
  if (cut <= 0) return [];
  const suffix = name.slice(cut + 1);
  if (!ORDINAL.test(suffix) || !Number.isSafeInteger(Number(suffix))) return [];
  const head = name.slice(0, cut);
  const parses: ClaimNameParse[] = [];
  for (
    let i = head.indexOf('-');
    i > 0 && i < head.length - 1 && parses.length < MAX_PARSES;
    i = head.indexOf('-', i + 1)
  )
    parses.push({
      template: head.slice(0, i),
      statefulSet: head.slice(i + 1),
      ordinal: Number(suffix),
    });
  return parses.filter(p => p.template && p.statefulSet);
}

/**
 * A deleted StatefulSet as the orphan rule can judge it: its name, uid and
 * templates, at 0 replicas. It runs no ordinal, and since it no longer
 * exists nothing scales it up again (see classifyLeftBehind).
 */
export function deletedStatefulSet(options: {
  namespace: string;
  name: string;
  uid?: string;
  templates: string[];
}): V1StatefulSet {
  return {
    metadata: {
      namespace: options.namespace,
      name: options.name,
      ...(options.uid ? { uid: options.uid } : {}),
    },
    spec: {
      replicas: 0,
      selector: {},
      serviceName: '',
      template: {},
      volumeClaimTemplates: [...new Set(options.templates)]
        .sort()
        .map(t => ({ metadata: { name: t }, spec: {} })),
    },
  };
}

/**
 * The orphan rule applied to a deleted StatefulSet's claims: named by its
 * templates with an ordinal, no pod references them, not being deleted,
 * named by no other StatefulSet of the namespace, not within the reach of
 * an autoscaler that still targets its name. Its 0 replicas are no pause
 * (nothing scales a deleted StatefulSet up), so they do not keep its
 * claims; a StatefulSet of its name that exists again does, and is the
 * caller's to rule out: such claims are judged by that StatefulSet.
 */
export function classifyLeftBehind(
  statefulSet: V1StatefulSet,
  snapshot: NamespaceSnapshot,
  volumes: ReadonlyMap<string, V1PersistentVolume>,
  autoscalers: KnownAutoscalers,
): StatefulSetOrphans {
  return classifyInSnapshot(statefulSet, snapshot, volumes, {
    autoscalers,
    pausedStatefulSets: 'offer',
  });
}
