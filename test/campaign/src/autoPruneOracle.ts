/**
 * The oracle on automatic pruning (issue 20). A deletion is automatic when
 * no prune the campaign sent confirmed it (its name and uid, to the replica
 * that deleted it): the campaign knows every manual prune it started, so
 * this needs nothing the plugin says about its jobs (requestedBy,
 * onBehalfOf, run summaries). Such a deletion is judged by what the
 * simulator recorded at its instant and by the campaign's own records:
 *
 * - `automatic-delete-of-entity-not-opted-in`: every StatefulSet naming the
 *   claim by an ordinal was claimed, in the catalog the campaign wrote, only
 *   by entities whose `pvc-pruner.backstage.io/auto-prune` annotation reads
 *   as a grace of at least the replicas' minimumGrace, and by one at least;
 * - `automatic-delete-of-kept-claim`: the claim, as the delete met it, had
 *   no keep annotation (any value but `false`), and no keep through the
 *   card that the campaign saw acknowledged (201) before the delete was
 *   sent was live (not un-kept, not past its end).
 *
 * And one of liveness, so that automation is shown to act, not only to
 * hold back: `opted-in-orphan-never-pruned`, an orphan that nothing the
 * scenario drew kept from automation (its `awaited`) was deleted before the
 * window closed, which waits for it; judged only when every claimant of its
 * StatefulSet, in the catalog as served, had opted in by then.
 */
import type { ClaimDeletion, KubeObject, RecordedRequest } from 'kube-sim';
import {
  AWAITED_WAIT_MS,
  CardKeepRecord,
  KeepAnnotationRecord,
} from './autoPrunePhase';
import {
  keptByAnnotation,
  namesClaim,
  optedInGraceMs,
  orphanNames,
} from './autoPruneScenario';
import { CLUSTER } from './backendClient';
import { labelsOf } from './cluster';
import { CatalogEntity, claims } from './ownership';
import { ordinalNaming } from './reattach';
import type { ScenarioRun } from './runScenario';
import type { StatefulSetPlan } from './scenario';

/**
 * A keep's end date is written and judged by the database's clock, the
 * campaign's by its own: a keep is taken as over this long before its end,
 * so that the two clocks' rounding never flags a keep that had just ended.
 */
const KEEP_END_MARGIN_MS = 1000;

export interface AutoPruneFigures {
  /** Deletions no prune of the campaign confirmed: judged as automatic. */
  deletions: number;
  /** …of a claim annotated keep only after the plugin's last read of it (the check-to-delete window): counted, not flagged. */
  keptAfterLastRead: number;
  /** …whose StatefulSet was there at the plugin's last read of it and gone when the delete arrived: counted, not judged for claimants. */
  statefulSetGoneAfterLastRead: number;
  /**
   * Orphans of the scenario's opted-in StatefulSets that a claimant not
   * opted in (or an invalid annotation) kept from automation, still there
   * when the runs' window closed: the situation the first invariant guards.
   */
  notOptedInExposed: number;
  /** Kept orphans (annotation or acknowledged card keep) of StatefulSets every claimant opted in, still there when the window closed. */
  keptExposed: number;
  /** Orphans nothing kept from automation, judged for `opted-in-orphan-never-pruned`. */
  awaited: number;
}

export function emptyAutoPruneFigures(): AutoPruneFigures {
  return {
    deletions: 0,
    keptAfterLastRead: 0,
    statefulSetGoneAfterLastRead: 0,
    notOptedInExposed: 0,
    keptExposed: 0,
    awaited: 0,
  };
}

type Flag = (
  invariant:
    | 'automatic-delete-of-entity-not-opted-in'
    | 'automatic-delete-of-kept-claim'
    | 'opted-in-orphan-never-pruned',
  detail: string,
) => void;

/** Whether a StatefulSet of this name may name the claim (`<template>-<name>-<ordinal>`), whatever its templates. */
export function mayName(statefulSet: string, claim: string): boolean {
  const at = claim.lastIndexOf(`-${statefulSet}-`);
  return (
    statefulSet !== '' &&
    at > 0 &&
    /^(0|[1-9][0-9]*)$/.test(claim.slice(at + statefulSet.length + 2))
  );
}

/** The catalog's entities that may have been served at `at` (written, not yet removed), and whether every replica served them. */
function catalogAt(catalog: CatalogEntity[], at: number) {
  return catalog
    .filter(
      e =>
        (e.writtenAt ?? e.visibleAt) <= at &&
        (e.removedAt === undefined || e.removedAt > at),
    )
    .map(e => ({ entity: e, certain: e.visibleAt <= at }));
}

/**
 * Why the StatefulSet (by its labels) may not be automated: claimants
 * every replica served that had not opted in, or no claimant that might
 * have been served had. Empty when every claimant had opted in.
 */
export function notOptedIn(
  catalog: CatalogEntity[],
  statefulSet: { namespace: string; labels: Record<string, string> },
  at: number,
  minimumGraceMs: number,
): string[] {
  const claimants = catalogAt(catalog, at).filter(c =>
    claims(c.entity, statefulSet, CLUSTER),
  );
  const opted = (e: CatalogEntity) =>
    optedInGraceMs(e.annotations, minimumGraceMs) !== undefined;
  const reasons = claimants
    .filter(c => c.certain && !opted(c.entity))
    .map(
      c =>
        `claimed by ${c.entity.ref}, ${
          c.entity.annotations['pvc-pruner.backstage.io/auto-prune'] ===
          undefined
            ? 'not opted in'
            : `whose opt-in "${c.entity.annotations['pvc-pruner.backstage.io/auto-prune']}" is not valid`
        }`,
    );
  if (!claimants.some(c => opted(c.entity)))
    reasons.push(
      claimants.length === 0
        ? 'claimed by no catalog entity'
        : 'claimed by no entity that had opted in',
    );
  return reasons;
}

/** Since when the claim (this uid) has carried a keep annotation without a break, by the campaign's own annotations; 0 when the campaign did not write the one it carries. */
function annotatedSince(
  records: KeepAnnotationRecord[],
  uid: string,
  at: number,
): number {
  let since: number | undefined;
  for (const r of records) {
    if (r.uid !== uid || r.at > at) continue;
    const kept =
      r.value !== undefined &&
      keptByAnnotation({ 'pvc-pruner.backstage.io/keep': r.value });
    if (!kept) since = undefined;
    else since ??= r.at;
  }
  return since ?? 0;
}

/**
 * The card keep of the claim (this uid) that was live at `at`: acknowledged
 * (201) before `sentAt`, the moment the delete was sent; not past its end;
 * not undone by an un-keep sent before `at` that could have been served
 * after it; and not replaced by another keep, served after it, that
 * ended sooner.
 */
export function liveCardKeep(
  records: CardKeepRecord[],
  uid: string,
  at: number,
  sentAt: number,
): CardKeepRecord | undefined {
  const of = records.filter(r => r.uid === uid);
  const ended = (r: CardKeepRecord) =>
    r.until !== undefined && r.until - KEEP_END_MARGIN_MS <= at;
  const mayFollow = (r: CardKeepRecord, keep: CardKeepRecord) =>
    r !== keep && r.sentAt <= at && (r.answeredAt ?? Infinity) >= keep.sentAt;
  return of.find(
    keep =>
      keep.kind === 'keep' &&
      keep.status === 201 &&
      keep.answeredAt !== undefined &&
      keep.answeredAt < sentAt &&
      !ended(keep) &&
      !of.some(
        r =>
          mayFollow(r, keep) &&
          (r.kind === 'unkeep' || (r.until !== undefined && ended(r))),
      ),
  );
}

/** Judges one automatic deletion; `lastClaimRead` is the deleting replica's last read of the claim before it. */
export function judgeAutomaticDeletion(
  run: ScenarioRun,
  d: ClaimDeletion,
  options: {
    sentAt: number;
    lastClaimRead?: RecordedRequest;
    /** The deleting replica's requests before the delete, answered, or a read of a StatefulSet that found none (404). */
    before: RecordedRequest[];
    minimumGraceMs: number;
    flag: Flag;
    figures: AutoPruneFigures;
  },
) {
  const { sentAt, flag, figures } = options;
  const name = d.request.name!;
  const claim = d.claim!;
  const ns = run.scenario.namespace;
  const records = run.autoPruneRecords;
  figures.deletions++;
  const what = `${name} (uid ${claim.uid}) was deleted by an automatic prune (no prune of the campaign confirmed it)`;

  // Whose StatefulSet: every one naming it by an ordinal, as the delete met them.
  const naming = d.statefulSets.filter(
    s => ordinalNaming(name, s) !== undefined,
  );
  if (naming.length === 0) {
    const lastRead = options.before
      .filter(
        r =>
          r.resource === 'statefulsets' &&
          r.namespace === ns &&
          ((r.verb === 'get' && mayName(r.name ?? '', name)) ||
            r.verb === 'list'),
      )
      .pop();
    if (lastRead && lastRead.status !== undefined && lastRead.status < 300)
      figures.statefulSetGoneAfterLastRead++;
    else
      flag(
        'automatic-delete-of-entity-not-opted-in',
        `${what}, though no StatefulSet named it${
          lastRead ? ' when the plugin last read it' : ''
        }: nobody's claimants had opted in`,
      );
  }
  for (const sts of naming) {
    const reasons = notOptedIn(
      run.catalog,
      { namespace: ns, labels: sts.labels },
      d.request.at,
      options.minimumGraceMs,
    );
    if (reasons.length > 0)
      flag(
        'automatic-delete-of-entity-not-opted-in',
        `${what}, though StatefulSet ${sts.name} (labels ${JSON.stringify(
          sts.labels,
        )}) was ${reasons.join('; ')}`,
      );
  }

  // Kept: by its annotation as the delete met it, or through the card.
  if (keptByAnnotation(claim.annotations)) {
    const since = annotatedSince(
      records.keepAnnotations,
      claim.uid,
      d.request.at,
    );
    const readAt = options.lastClaimRead?.at;
    if (readAt !== undefined && since > readAt) figures.keptAfterLastRead++;
    else
      flag(
        'automatic-delete-of-kept-claim',
        `${what}, though it carried pvc-pruner.backstage.io/keep="${
          claim.annotations!['pvc-pruner.backstage.io/keep']
        }"${
          since ? ` since ${(d.request.at - since).toFixed(0)} ms before` : ''
        } (the plugin's last read of it ${
          readAt === undefined
            ? 'none'
            : `${(d.request.at - readAt).toFixed(0)} ms before`
        })`,
      );
  }
  const card = liveCardKeep(records.cardKeeps, claim.uid, d.request.at, sentAt);
  if (card)
    flag(
      'automatic-delete-of-kept-claim',
      `${what}, though the card's keep of it (replica ${
        card.replica
      }) was acknowledged ${(sentAt - card.answeredAt!).toFixed(
        0,
      )} ms before the delete was sent${
        card.until !== undefined
          ? `, until ${(card.until - d.request.at).toFixed(0)} ms after it`
          : ''
      }, and not removed`,
    );
}

/** Whether a claimant of the planned StatefulSet, in the catalog as served at `at`, kept it from automation. */
function heldBack(
  run: ScenarioRun,
  plan: StatefulSetPlan,
  at: number,
  minimumGraceMs: number,
): boolean {
  const statefulSet = {
    namespace: run.scenario.namespace,
    labels: labelsOf(plan.team, plan.name, plan.kubernetesId),
  };
  return notOptedIn(run.catalog, statefulSet, at, minimumGraceMs).length > 0;
}

/**
 * The situations the automatic invariants guard, as they stood when the
 * runs' window closed: orphans of the scenario's opted-in StatefulSets
 * still there that a claimant not opted in kept from automation, and
 * kept ones of StatefulSets every claimant opted in.
 */
export function exposures(
  run: ScenarioRun,
  minimumGraceMs: number,
  figures: AutoPruneFigures,
) {
  const auto = run.scenario.autoPrune;
  const closedAt = run.autoPruneRecords.windowClosedAt;
  if (!auto || closedAt === undefined) return;
  const present = new Map<string, KubeObject>(
    run.finalClaims.map(c => [c.metadata.name, c]),
  );
  for (const plan of run.scenario.statefulSets) {
    if (!auto.statefulSets.includes(plan.name)) continue;
    const optedOut = heldBack(run, plan, closedAt, minimumGraceMs);
    for (const name of orphanNames(plan)) {
      const claim = present.get(name);
      if (!claim) continue;
      if (optedOut) figures.notOptedInExposed++;
      else if (
        keptByAnnotation(claim.metadata.annotations) ||
        liveCardKeep(
          run.autoPruneRecords.cardKeeps,
          claim.metadata.uid,
          closedAt,
          closedAt,
        )
      )
        figures.keptExposed++;
    }
  }
}

/**
 * Flags each orphan the scenario awaited (nothing it drew kept it from
 * automation) that no replica deleted (`deleted`: the names of the claims
 * their deletes met) by the time the window closed, when every claimant of
 * its StatefulSet in the catalog as served had opted in by then.
 */
export function judgeAwaited(
  run: ScenarioRun,
  deleted: ReadonlySet<string>,
  minimumGraceMs: number,
  flag: Flag,
  figures: AutoPruneFigures,
) {
  const auto = run.scenario.autoPrune;
  const closedAt = run.autoPruneRecords.windowClosedAt;
  if (!auto || closedAt === undefined) return;
  for (const name of auto.awaited) {
    const plan = run.scenario.statefulSets.find(
      s => auto.statefulSets.includes(s.name) && namesClaim(s, name),
    );
    if (!plan || heldBack(run, plan, closedAt, minimumGraceMs)) continue;
    figures.awaited++;
    if (!deleted.has(name))
      flag(
        'opted-in-orphan-never-pruned',
        `${name}, an orphan of ${
          plan.name
        } whose every claimant had opted in, was never deleted, though nothing the scenario drew kept it from automation: the window (${
          auto.windowMs / 1000
        } s) waited up to ${AWAITED_WAIT_MS / 1000} s more for it`,
      );
  }
}
