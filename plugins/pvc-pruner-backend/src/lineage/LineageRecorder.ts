import type { LoggerService } from '@backstage/backend-plugin-api';
import type { V1StatefulSet } from '@kubernetes/client-node';
import { NamespaceSnapshot, parseClaimName } from '../orphans/orphanRule';
import type { ClaimantIndex } from '../ownership/ClaimantIndex';
import type {
  ClaimLineageRecord,
  ClaimLineageStore,
} from './ClaimLineageStore';

/** A StatefulSet a scan saw, with its namespace as the scan read it. */
export interface SeenStatefulSet {
  statefulSet: V1StatefulSet;
  snapshot: NamespaceSnapshot;
}

/**
 * The claims of a StatefulSet in its namespace: those whose names are
 * exactly `<template>-<name>-<ordinal>` for one of its volumeClaimTemplates,
 * which it would attach at that ordinal. A claim whose name fits another
 * StatefulSet of the namespace too is left out: its name alone cannot say
 * whose it is, and a lineage that flips between two would say nothing.
 */
export function claimsOfStatefulSet(
  sts: V1StatefulSet,
  snapshot: NamespaceSnapshot,
): Array<{ uid: string; template: string; ordinal: number }> {
  const found = new Map<
    string,
    { uid: string; template: string; ordinal: number }
  >();
  for (const t of sts.spec?.volumeClaimTemplates ?? []) {
    for (const claim of snapshot.withPrefix(
      `${t.metadata?.name ?? ''}-${sts.metadata?.name ?? ''}-`,
    )) {
      const name = claim.metadata?.name ?? '';
      const uid = claim.metadata?.uid;
      if (!uid || found.has(name)) continue;
      const parsed = parseClaimName(name, sts);
      if (parsed?.ordinal === undefined) continue;
      if (snapshot.alsoNamedBy(name, sts).length > 0) continue;
      found.set(name, {
        uid,
        template: parsed.template,
        ordinal: parsed.ordinal,
      });
    }
  }
  return [...found.values()];
}

/**
 * Records, whenever a scan sees StatefulSets, what each of their claims
 * belonged to (see ClaimLineageStore): the StatefulSet, the template and
 * ordinal, and its claimants as the warm catalog read has them. Best
 * effort: a scan never fails for it, and a failure is logged. The records
 * of a StatefulSet a watch cache hands out again unchanged are not made
 * again.
 */
export class LineageRecorder {
  /** By the StatefulSet object a watch cache keeps until it changes. */
  private readonly made = new WeakMap<
    V1StatefulSet,
    {
      snapshot: NamespaceSnapshot;
      index: ClaimantIndex;
      records: ClaimLineageRecord[];
    }
  >();
  /** Whether the last failure was logged; cleared by a success. */
  private failing = false;

  constructor(
    private readonly deps: {
      store: Pick<ClaimLineageStore, 'record'>;
      /** The catalog read claimants come from (WorkloadCatalog). */
      workloads: { warm(): Promise<ClaimantIndex> };
      logger: LoggerService;
    },
  ) {}

  /** Records the lineage of the claims of the StatefulSets one cluster's scan saw. */
  async saw(cluster: string, seen: SeenStatefulSet[]): Promise<void> {
    if (seen.length === 0) return;
    try {
      const index = await this.deps.workloads.warm();
      await this.deps.store.record(
        seen.flatMap(s => this.recordsOf(cluster, index, s)),
      );
      this.failing = false;
    } catch (e) {
      if (this.failing) return;
      this.failing = true;
      this.deps.logger.warn(
        `pvc-pruner: could not record which StatefulSet each claim belongs to (its lineage): ${e}`,
      );
    }
  }

  private recordsOf(
    cluster: string,
    index: ClaimantIndex,
    { statefulSet, snapshot }: SeenStatefulSet,
  ): ClaimLineageRecord[] {
    const kept = this.made.get(statefulSet);
    if (kept && kept.snapshot === snapshot && kept.index === index)
      return kept.records;
    const name = statefulSet.metadata?.name ?? '';
    const uid = statefulSet.metadata?.uid ?? '';
    const claims = claimsOfStatefulSet(statefulSet, snapshot);
    const entities =
      claims.length > 0 ? index.claimantsOf(cluster, statefulSet) : [];
    const claimants = entities.map(e => e.entityRef);
    const claimantUids = Object.fromEntries(
      entities.flatMap(e =>
        e.entity.metadata.uid ? [[e.entityRef, e.entity.metadata.uid]] : [],
      ),
    );
    const records = claims.map(c => ({
      cluster,
      namespace: statefulSet.metadata?.namespace ?? '',
      claimUid: c.uid,
      statefulSet: { name, uid },
      template: c.template,
      ordinal: c.ordinal,
      claimants,
      claimantUids,
    }));
    this.made.set(statefulSet, { snapshot, index, records });
    return records;
  }
}
