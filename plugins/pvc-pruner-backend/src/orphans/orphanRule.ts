import type {
  V1ObjectMeta,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1StatefulSet,
} from '@kubernetes/client-node';
import {
  claimBytes,
  InUsePvcs,
  KeptPvc,
  OrphanedPvc,
  parseQuantity,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import type { WatchCacheTrimmers } from '../kubernetes';
import { annotationKeep, keepAnnotationOf } from '../automation/keepAnnotation';
import { claimNamesOfPod } from '../kubernetes/podClaims';
import {
  autoscalerReach,
  autoscalersOf,
  hpaAsTheRuleReadsIt,
  isUnreadable,
  KnownAutoscalers,
} from '../autoscaling';

const DECIMAL_ORDINAL = /^(0|[1-9]\d*)$/;

/** Kubernetes names are ASCII: code-unit order is enough, and much cheaper than localeCompare. */
function compareNames(a: string, b: string) {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/** The ordinals a StatefulSet runs: start ≤ ordinal < end (spec.ordinals.start and spec.replicas). */
export function runningOrdinals(sts: V1StatefulSet): {
  start: number;
  end: number;
} {
  const start = sts.spec?.ordinals?.start ?? 0;
  const replicas = sts.spec?.replicas ?? 1;
  return { start, end: start + replicas };
}

/**
 * Whether the StatefulSet is scaled to 0 (paused). An unset spec.replicas
 * means 1; any other value that is not a positive number (only a broken API
 * server sends one) counts as paused, which keeps its claims.
 */
export function isPaused(sts: V1StatefulSet): boolean {
  const replicas: unknown = sts.spec?.replicas;
  return (
    replicas !== undefined && replicas !== null && !(Number(replicas) >= 1)
  );
}

/** Pods (running or terminating) that reference each claim, by claim name (generic ephemeral volumes included). */
export function podsByClaim(pods: V1Pod[]): Map<string, V1Pod[]> {
  const byClaim = new Map<string, V1Pod[]>();
  for (const pod of pods) {
    for (const claim of claimNamesOfPod(pod)) {
      const users = byClaim.get(claim);
      if (users) users.push(pod);
      else byClaim.set(claim, [pod]);
    }
  }
  return byClaim;
}

/** Which object this is, and which version of it was read. */
function versionedIdentity(metadata: V1ObjectMeta): V1ObjectMeta {
  const { name, namespace, uid, resourceVersion } = metadata;
  return { name, namespace, uid, resourceVersion };
}

/** The claim with only the fields the orphan rule reads. */
export function claimAsTheRuleReadsIt(
  claim: V1PersistentVolumeClaim,
): V1PersistentVolumeClaim {
  const { metadata, spec, status } = claim;
  const annotations = keepAnnotationOf(claim);
  return {
    metadata: metadata && {
      ...versionedIdentity(metadata),
      // Only the keep: what automatic pruning honours.
      ...(annotations ? { annotations } : {}),
      creationTimestamp: metadata.creationTimestamp,
      deletionTimestamp: metadata.deletionTimestamp,
      // What holds a claim being deleted; nobody needs them otherwise.
      ...(metadata.deletionTimestamp
        ? { finalizers: metadata.finalizers }
        : {}),
    },
    spec: spec && {
      resources: spec.resources && { requests: spec.resources.requests },
      storageClassName: spec.storageClassName,
      volumeName: spec.volumeName,
    },
    status: status && { phase: status.phase, capacity: status.capacity },
  };
}

/** The pod with only the fields the orphan rule reads: who it is, whether it terminates, which claims it mounts. */
export function podAsTheRuleReadsIt(pod: V1Pod): V1Pod {
  const { metadata, spec } = pod;
  return {
    metadata: metadata && {
      name: metadata.name,
      namespace: metadata.namespace,
      // A pod re-created under its name mounts its claims anew (InUseClaimsSweeper).
      uid: metadata.uid,
      deletionTimestamp: metadata.deletionTimestamp,
    },
    spec: spec && {
      containers: [],
      // A generic ephemeral volume's claim is named after the pod and the volume; its template is not read.
      volumes: spec.volumes?.flatMap(v => {
        if (v.persistentVolumeClaim) return [v];
        return v.ephemeral ? [{ name: v.name, ephemeral: {} }] : [];
      }),
    },
  };
}

/** The StatefulSet with only the fields the orphan rule reads, and the labels an entity's selector matches. */
export function statefulSetAsTheRuleReadsIt(sts: V1StatefulSet): V1StatefulSet {
  const { metadata, spec, status } = sts;
  return {
    metadata: metadata && {
      ...versionedIdentity(metadata),
      labels: metadata.labels,
    },
    spec: spec && {
      replicas: spec.replicas,
      ordinals: spec.ordinals,
      persistentVolumeClaimRetentionPolicy:
        spec.persistentVolumeClaimRetentionPolicy,
      volumeClaimTemplates: spec.volumeClaimTemplates?.map(t => ({
        metadata: { name: t.metadata?.name },
      })),
      selector: spec.selector,
      // The pod template is never read, and is most of a StatefulSet's size.
      template: {},
    },
    status: status && {
      replicas: status.replicas,
      readyReplicas: status.readyReplicas,
    },
  };
}

/** The volume with only the fields an orphan's report reads: its reclaim policy and phase. */
export function volumeAsTheRuleReadsIt(
  pv: V1PersistentVolume,
): V1PersistentVolume {
  const { metadata, spec, status } = pv;
  return {
    metadata: metadata && {
      name: metadata.name,
      resourceVersion: metadata.resourceVersion,
    },
    spec: spec && {
      persistentVolumeReclaimPolicy: spec.persistentVolumeReclaimPolicy,
      // The card tells which VolumeSnapshotClass a prune would use: it goes by the driver.
      ...(spec.csi
        ? {
            csi: {
              driver: spec.csi.driver,
              volumeHandle: spec.csi.volumeHandle,
            },
          }
        : {}),
    },
    status: status && { phase: status.phase },
  };
}

/** Owner references kept per claim: a claim has one controller, and rarely more owners. */
const MAX_OWNER_REFERENCES = 10;

/**
 * The claim as the rule reads it, with its labels and owners: the labels
 * decide which entities claim a claim a deleted StatefulSet left, and an
 * owner other than a deleted StatefulSet shows it was not left (see
 * leftBehind/).
 */
export function claimWithLabels(
  claim: V1PersistentVolumeClaim,
): V1PersistentVolumeClaim {
  const trimmed = claimAsTheRuleReadsIt(claim);
  const owners = claim.metadata?.ownerReferences;
  return {
    ...trimmed,
    metadata: {
      ...trimmed.metadata,
      labels: claim.metadata?.labels,
      ...(owners
        ? {
            ownerReferences: owners
              .slice(0, MAX_OWNER_REFERENCES)
              .map(({ apiVersion, kind, name, uid, controller }) => ({
                apiVersion,
                kind,
                name,
                uid,
                controller,
              })),
          }
        : {}),
    },
  };
}

/** What the watch cache keeps of each kind: what the orphan rule reads, and claims' labels. */
export const WATCH_CACHE_TRIMMERS: WatchCacheTrimmers = {
  statefulSet: statefulSetAsTheRuleReadsIt,
  claim: claimWithLabels,
  pod: podAsTheRuleReadsIt,
  volume: volumeAsTheRuleReadsIt,
  autoscaler: hpaAsTheRuleReadsIt,
};

/** A claim name parsed as `<template>-<statefulset>-<ordinal>`, or why it does not parse. */
export type ParsedClaimName =
  | { template: string; ordinal: number }
  | { template: string; ordinal?: undefined; suffix: string };

/**
 * Matches a claim name against the StatefulSet's templates. Undefined when
 * the name is not `<template>-<sts>-…` for any template; a parse without an
 * ordinal when the rest is not a canonical decimal integer (`2-0` of
 * StatefulSet `web-2`, `backup`, `01`).
 */
export function parseClaimName(
  claimName: string,
  sts: V1StatefulSet,
): ParsedClaimName | undefined {
  const stsName = sts.metadata?.name ?? '';
  let unparsed: ParsedClaimName | undefined;
  for (const template of sts.spec?.volumeClaimTemplates ?? []) {
    const templateName = template.metadata?.name ?? '';
    const prefix = `${templateName}-${stsName}-`;
    if (!claimName.startsWith(prefix)) continue;
    const suffix = claimName.slice(prefix.length);
    // One template's prefix can contain another's ("data" and "data-web"): an exact parse wins.
    if (DECIMAL_ORDINAL.test(suffix) && Number.isSafeInteger(Number(suffix))) {
      return { template: templateName, ordinal: Number(suffix) };
    }
    unparsed ??= { template: templateName, suffix };
  }
  return unparsed;
}

function volumeSummary(name: string, pv: V1PersistentVolume | undefined) {
  const reclaimPolicy = pv?.spec?.persistentVolumeReclaimPolicy;
  return {
    name,
    reclaimPolicy,
    phase: pv?.status?.phase,
    retained: reclaimPolicy === 'Retain',
    ...(pv?.spec?.csi?.driver ? { csiDriver: pv.spec.csi.driver } : {}),
  };
}

function orphanOf(
  claim: V1PersistentVolumeClaim,
  template: string,
  ordinal: number,
  start: number,
  volumes: ReadonlyMap<string, V1PersistentVolume>,
): OrphanedPvc {
  const volumeName = claim.spec?.volumeName;
  const pv = volumeName ? volumes.get(volumeName) : undefined;
  const requested = claim.spec?.resources?.requests?.storage as
    | string
    | undefined;
  const capacity = claim.status?.capacity?.storage as string | undefined;
  const keep = annotationKeep(claim);
  return {
    name: claim.metadata!.name!,
    uid: claim.metadata!.uid!,
    resourceVersion: claim.metadata!.resourceVersion!,
    ordinal,
    template,
    phase: claim.status?.phase,
    requested,
    requestedBytes: parseQuantity(requested) ?? 0,
    capacity,
    capacityBytes: parseQuantity(capacity),
    storageClassName: claim.spec?.storageClassName,
    volume: volumeName ? volumeSummary(volumeName, pv) : undefined,
    createdAt: claim.metadata?.creationTimestamp
      ? new Date(claim.metadata.creationTimestamp).toISOString()
      : undefined,
    reattachesAtReplicas: ordinal - start + 1,
    ...(keep ? { keep } : {}),
  };
}

/** Pods (running or terminating) referencing each claim, by claim name. */
export type PodsByClaim = ReadonlyMap<string, readonly V1Pod[]>;

/** A StatefulSet whose template names a claim. */
export interface NameParse {
  statefulSet: string;
  template: string;
}

/** A namespace's claims, pods and StatefulSets, indexed once for all the StatefulSets in it. */
export class NamespaceSnapshot {
  private readonly claims: V1PersistentVolumeClaim[];
  private readonly names: string[];
  /** By claim name, the StatefulSets whose templates name it with an ordinal; made when first asked. */
  private namers?: Map<string, NameParse[]>;

  private constructor(
    readonly namespace: string,
    byName: ReadonlyMap<string, V1PersistentVolumeClaim>,
    /** Pods (running or terminating) referencing each claim. */
    readonly usedBy: PodsByClaim,
    /** Every StatefulSet of the namespace, the entity's or not. */
    private readonly statefulSets: readonly V1StatefulSet[],
  ) {
    // Plain code-unit order, the order the binary search in withPrefix relies on.
    this.names = [...byName.keys()].sort();
    this.claims = this.names.map(n => byName.get(n)!);
  }

  /** From lists of claims, pods and StatefulSets; objects of other namespaces are ignored. */
  static of(
    namespace: string,
    claims: V1PersistentVolumeClaim[],
    pods: V1Pod[],
    statefulSets: V1StatefulSet[],
  ): NamespaceSnapshot {
    return new NamespaceSnapshot(
      namespace,
      new Map(
        claims
          .filter(c => c.metadata?.namespace === namespace)
          .map(c => [c.metadata?.name ?? '', c]),
      ),
      podsByClaim(pods.filter(p => p.metadata?.namespace === namespace)),
      statefulSets.filter(s => s.metadata?.namespace === namespace),
    );
  }

  /** From indexes already kept by name (a watch cache's), without copying the pods. */
  static fromIndex(
    namespace: string,
    claimsByName: ReadonlyMap<string, V1PersistentVolumeClaim>,
    usedBy: PodsByClaim,
    statefulSets: Iterable<V1StatefulSet>,
  ): NamespaceSnapshot {
    return new NamespaceSnapshot(namespace, claimsByName, usedBy, [
      ...statefulSets,
    ]);
  }

  /**
   * The other StatefulSets of the namespace whose templates also name this
   * claim, with an ordinal: `data-ledger-db-2` is ordinal 2 of both
   * `ledger-db` (template `data`) and `db` (template `data-ledger`), and its
   * name alone cannot tell whose it is.
   */
  alsoNamedBy(claimName: string, sts: V1StatefulSet): NameParse[] {
    if (!this.namers) {
      const namers = new Map<string, NameParse[]>();
      for (const other of this.statefulSets)
        for (const template of other.spec?.volumeClaimTemplates ?? [])
          for (const claim of this.withPrefix(
            `${template.metadata?.name}-${other.metadata?.name}-`,
          )) {
            const name = claim.metadata?.name ?? '';
            const parsed = parseClaimName(name, other);
            if (parsed?.ordinal === undefined) continue;
            const list = namers.get(name) ?? [];
            if (!list.some(n => n.statefulSet === other.metadata?.name))
              list.push({
                statefulSet: other.metadata?.name ?? '',
                template: parsed.template,
              });
            namers.set(name, list);
          }
      this.namers = namers;
    }
    return (this.namers.get(claimName) ?? []).filter(
      n => n.statefulSet !== sts.metadata?.name,
    );
  }

  /** Claims whose names start with prefix, by binary search over the sorted names. */
  withPrefix(prefix: string): V1PersistentVolumeClaim[] {
    let lo = 0;
    let hi = this.names.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.names[mid] < prefix) lo = mid + 1;
      else hi = mid;
    }
    const found: V1PersistentVolumeClaim[] = [];
    for (
      let i = lo;
      i < this.names.length && this.names[i].startsWith(prefix);
      i++
    )
      found.push(this.claims[i]);
    return found;
  }
}

/** `pvcPruner.pausedStatefulSets`: keep the claims of a StatefulSet at 0 replicas (the default), or offer them. */
export type PausedStatefulSets = 'keep' | 'offer';

/** What says a StatefulSet may be scaled up again, which would reattach claims it does not run now. */
export interface ScaleUpSignals {
  /**
   * The HorizontalPodAutoscalers of its namespace (those that target other
   * workloads are ignored), or why they could not be read.
   */
  autoscalers: KnownAutoscalers;
  pausedStatefulSets: PausedStatefulSets;
}

export interface OrphanRuleInput {
  statefulSet: V1StatefulSet;
  /** Every StatefulSet of its namespace (itself among them or not): a claim whose name fits another is kept. */
  neighbours: V1StatefulSet[];
  /** Every claim in the StatefulSet's namespace. */
  claims: V1PersistentVolumeClaim[];
  /** Every pod in the StatefulSet's namespace, terminating ones included. */
  pods: V1Pod[];
  /** Volumes bound to the claims, by name. */
  volumes: Map<string, V1PersistentVolume>;
  /**
   * The HorizontalPodAutoscalers of the StatefulSet's namespace, or only
   * those that target it (a prune's AutoscalerGuard.autoscalers), or why they
   * could not be read. Required: forgetting them would offer claims an
   * autoscaler brings back.
   */
  autoscalers: KnownAutoscalers;
  /** `pvcPruner.pausedStatefulSets`; `keep` when not given. */
  pausedStatefulSets?: PausedStatefulSets;
}

/**
 * The orphan rule. A claim is an orphan of StatefulSet S only if it is in S's
 * namespace, its name is exactly `<template>-<S>-<decimal ordinal>`, the
 * ordinal is outside the ordinals S runs now, no pod, terminating or not,
 * references it, it is not already being deleted, and S will not bring it
 * back: S is not paused at 0 replicas (unless `pausedStatefulSets` is
 * `offer`), and the ordinal is not below `ordinals.start + maxReplicas` of
 * a HorizontalPodAutoscaler that targets S (nor are S's autoscalers
 * unknown). Claims that match a template's name but fail a test are kept:
 * those of running ordinals grouped per template (inUse), the others with
 * the reason.
 */
export function classifyClaims(input: OrphanRuleInput): StatefulSetOrphans {
  const snapshot = NamespaceSnapshot.of(
    input.statefulSet.metadata?.namespace ?? '',
    input.claims,
    input.pods,
    input.neighbours,
  );
  return classifyInSnapshot(input.statefulSet, snapshot, input.volumes, {
    autoscalers: input.autoscalers,
    pausedStatefulSets: input.pausedStatefulSets ?? 'keep',
  });
}

/** The orphan rule for one StatefulSet against an indexed namespace (see classifyClaims). */
export function classifyInSnapshot(
  sts: V1StatefulSet,
  snapshot: NamespaceSnapshot,
  volumes: ReadonlyMap<string, V1PersistentVolume>,
  scaleUps: ScaleUpSignals,
): StatefulSetOrphans {
  const namespace = sts.metadata?.namespace;
  const ordinals = runningOrdinals(sts);
  const keepPaused = scaleUps.pausedStatefulSets !== 'offer' && isPaused(sts);
  const autoscalersError = isUnreadable(scaleUps.autoscalers)
    ? scaleUps.autoscalers.unreadable
    : undefined;
  const reach = isUnreadable(scaleUps.autoscalers)
    ? undefined
    : autoscalerReach(autoscalersOf(sts, scaleUps.autoscalers), ordinals.start);
  // One object for every claim it keeps.
  const autoscaler = reach && {
    name: reach.name,
    ...(reach.maxReplicas !== undefined
      ? { maxReplicas: reach.maxReplicas }
      : {}),
  };
  const templates = (sts.spec?.volumeClaimTemplates ?? []).map(
    t => t.metadata?.name ?? '',
  );
  const usedBy = snapshot.usedBy;
  const orphans: OrphanedPvc[] = [];
  const kept: KeptPvc[] = [];
  // Keyed in the spec's order; a template named twice is one key.
  const inUse = new Map(templates.map(t => [t, [] as number[]]));
  const candidates = new Map<string, V1PersistentVolumeClaim>();
  for (const template of templates) {
    for (const claim of snapshot.withPrefix(
      `${template}-${sts.metadata?.name}-`,
    )) {
      candidates.set(claim.metadata?.name ?? '', claim);
    }
  }

  for (const [name, claim] of candidates) {
    const parsed = parseClaimName(name, sts)!;
    const uid = claim.metadata?.uid ?? '';
    const template = parsed.template;
    if (parsed.ordinal === undefined) {
      kept.push({ name, uid, template, reason: 'not-an-ordinal' });
      continue;
    }
    const ordinal = parsed.ordinal;
    if (ordinal >= ordinals.start && ordinal < ordinals.end) {
      inUse.get(template)!.push(ordinal);
      continue;
    }
    const pods = usedBy.get(name);
    if (pods?.length) {
      kept.push({
        name,
        uid,
        template,
        ordinal,
        reason: 'mounted-by-pod',
        pods: pods.map(p => ({
          name: p.metadata?.name ?? '',
          terminating: Boolean(p.metadata?.deletionTimestamp),
        })),
      });
      continue;
    }
    if (claim.metadata?.deletionTimestamp) {
      // Already being deleted: pruning it again reclaims nothing, and scaling up would not reattach it.
      kept.push({
        name,
        uid,
        template,
        ordinal,
        reason: 'terminating',
        finalizers: claim.metadata.finalizers ?? [],
      });
      continue;
    }
    // Claims are found by name: one whose name fits another StatefulSet too may be that one's.
    const alsoNamedBy = snapshot.alsoNamedBy(name, sts);
    if (alsoNamedBy.length > 0) {
      kept.push({
        name,
        uid,
        template,
        ordinal,
        reason: 'name-also-fits',
        alsoNamedBy: alsoNamedBy.slice(0, 10),
      });
      continue;
    }
    // Claims a scale-up would reattach, data and all.
    if (keepPaused) {
      kept.push({ name, uid, template, ordinal, reason: 'paused' });
      continue;
    }
    if (autoscalersError !== undefined) {
      kept.push({
        name,
        uid,
        template,
        ordinal,
        reason: 'autoscalers-unreadable',
        autoscalersError,
      });
      continue;
    }
    if (reach && autoscaler && ordinal < reach.end) {
      kept.push({
        name,
        uid,
        template,
        ordinal,
        reason: 'autoscaler-range',
        autoscaler,
      });
      continue;
    }
    orphans.push(
      orphanOf(claim, parsed.template, ordinal, ordinals.start, volumes),
    );
  }

  orphans.sort(
    (a, b) => a.ordinal - b.ordinal || compareNames(a.template, b.template),
  );
  return withTotals({
    name: sts.metadata?.name ?? '',
    namespace: namespace ?? '',
    uid: sts.metadata?.uid ?? '',
    replicas: sts.spec?.replicas ?? 1,
    ordinals,
    readyReplicas: sts.status?.readyReplicas ?? 0,
    retentionPolicy: {
      whenScaled:
        sts.spec?.persistentVolumeClaimRetentionPolicy?.whenScaled ?? 'Retain',
      whenDeleted:
        sts.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted ?? 'Retain',
    },
    templates,
    orphans,
    inUse: [...inUse]
      .filter(([, inTemplate]) => inTemplate.length > 0)
      .map(
        ([template, inTemplate]): InUsePvcs => ({
          template,
          ordinals: inTemplate.sort((a, b) => a - b),
        }),
      ),
    kept: kept.sort(
      (a, b) =>
        (a.ordinal ?? Infinity) - (b.ordinal ?? Infinity) ||
        compareNames(a.name, b.name),
    ),
  });
}

function withTotals(
  report: Omit<StatefulSetOrphans, 'reclaimableBytes' | 'retainedBytes'>,
): StatefulSetOrphans {
  const sum = (list: OrphanedPvc[]) =>
    list.reduce((n, o) => n + claimBytes(o), 0);
  return {
    ...report,
    reclaimableBytes: sum(report.orphans.filter(o => !o.volume?.retained)),
    retainedBytes: sum(report.orphans.filter(o => o.volume?.retained)),
  };
}

/** The report with its orphans' volumes (reclaim policy, phase) filled in from volumes read afterwards. */
export function withVolumes(
  report: StatefulSetOrphans,
  volumes: Map<string, V1PersistentVolume>,
): StatefulSetOrphans {
  return withTotals({
    ...report,
    orphans: report.orphans.map(o =>
      o.volume
        ? {
            ...o,
            volume: volumeSummary(o.volume.name, volumes.get(o.volume.name)),
          }
        : o,
    ),
  });
}
