/**
 * What a scenario does while automatic runs go on (issue 20): the owner's
 * keeps (kubectl annotations on the claims; keeps and un-keeps through the
 * card's routes, each logged with when the campaign sent it and when it
 * saw the answer). The oracle
 * judges automatic deletions against these records and the simulator's
 * history, never against what the plugin says it did.
 */
import { historyNow, KubeSim } from 'kube-sim';
import { BackendClient } from './backendClient';
import { AUTO_PRUNE_SETTINGS, namesClaim } from './autoPruneScenario';
import { chaos } from './cluster';
import type { KeepPlan, Scenario } from './scenario';

/** A keep or un-keep the campaign sent through the card's routes. */
export interface CardKeepRecord {
  kind: 'keep' | 'unkeep';
  claim: string;
  uid: string;
  replica: number;
  /** When the campaign sent it (historyNow()). */
  sentAt: number;
  /** When the campaign saw the answer, and its status (none: no answer). */
  answeredAt?: number;
  status?: number;
  /** For a keep with an end date: when it ends (historyNow() clock). */
  until?: number;
}

/** A keep annotation the campaign wrote on a claim (value undefined: removed), as the store committed it. */
export interface KeepAnnotationRecord {
  claim: string;
  uid: string;
  value?: string;
  at: number;
}

/** What the automatic side of a scenario recorded. */
export interface AutoPruneRecords {
  cardKeeps: CardKeepRecord[];
  keepAnnotations: KeepAnnotationRecord[];
  /** When the scenario stopped letting automatic runs go on. */
  windowClosedAt?: number;
}

export function emptyAutoPruneRecords(): AutoPruneRecords {
  return { cardKeeps: [], keepAnnotations: [] };
}

/** The opted-in StatefulSet whose template and ordinal name the claim. */
function statefulSetOf(scenario: Scenario, claim: string) {
  return scenario.statefulSets.find(
    s =>
      scenario.autoPrune?.statefulSets.includes(s.name) && namesClaim(s, claim),
  )?.name;
}

/** Carries out one keep of the plan, and logs it. */
export async function applyKeep(
  sim: KubeSim,
  clients: BackendClient[],
  scenario: Scenario,
  keep: KeepPlan,
  records: AutoPruneRecords,
  count: (kind: string) => void,
) {
  const ns = scenario.namespace;
  if (keep.kind === 'annotate' || keep.kind === 'unannotate') {
    const value = keep.kind === 'annotate' ? keep.value : undefined;
    const uid = chaos.annotateKeep(sim, ns, keep.claim, value);
    if (!uid) return;
    records.keepAnnotations.push({
      claim: keep.claim,
      uid,
      ...(value !== undefined ? { value } : {}),
      at: historyNow(),
    });
    count(
      value === undefined
        ? 'auto-prune: keep annotation removed'
        : `auto-prune: claim annotated keep=${value.trim()}`,
    );
    return;
  }
  const uid = sim.store.get('persistentvolumeclaims', ns, keep.claim)?.metadata
    .uid;
  const statefulSet = statefulSetOf(scenario, keep.claim);
  if (!uid || !statefulSet) return;
  const entityRef = `component:default/${scenario.autoPrune!.entity}`;
  const client = clients[keep.replica];
  const record: CardKeepRecord = {
    kind: keep.kind === 'card-keep' ? 'keep' : 'unkeep',
    claim: keep.claim,
    uid,
    replica: keep.replica,
    sentAt: historyNow(),
  };
  records.cardKeeps.push(record);
  if (keep.kind === 'card-keep') {
    if (keep.untilMs !== undefined) record.until = record.sentAt + keep.untilMs;
    record.status = await client.keepClaim({
      entityRef,
      namespace: ns,
      statefulSet,
      claim: { name: keep.claim, uid },
      reason: 'the campaign keeps it',
      ...(record.until !== undefined
        ? { until: new Date(record.until).toISOString() }
        : {}),
    });
  } else {
    record.status = await client.unkeepClaim(uid, entityRef);
  }
  record.answeredAt = historyNow();
  count(
    `auto-prune: card ${record.kind} answered ${record.status ?? 'nothing'}`,
  );
}

/**
 * How long past the window the scenario waits for the orphans the runs
 * must prune: a replica killed during a run holds the task's lock until
 * its timeout, and each run after it prunes a few claims only.
 */
export const AWAITED_WAIT_MS =
  (2 * AUTO_PRUNE_SETTINGS.timeoutSeconds + 5) * 1000;

/**
 * Resolves once each of the claims is deleted (gone, or terminating), or
 * after `timeoutMs`: the simulator's store answers, not the plugin.
 */
export async function untilDeleted(
  sim: KubeSim,
  namespace: string,
  claims: readonly string[],
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  const left = () =>
    claims.filter(name => {
      const claim = sim.store.get('persistentvolumeclaims', namespace, name);
      return claim && !claim.metadata.deletionTimestamp;
    });
  while (left().length > 0 && Date.now() < deadline)
    await new Promise(r => setTimeout(r, 200));
}
