/** The campaign's figures: counts, violations by invariant, and how to replay each failure. */
import { Invariant, INVARIANTS, Judgement, Violation } from './oracle';
import { ScenarioRun } from './runScenario';

export interface ScenarioResult {
  index: number;
  seed: number;
  run: ScenarioRun;
  judgement: Judgement;
}

/**
 * What exercises each of issue 19's and issue 20's invariants, per scenario: a run of at
 * least MIN_SCENARIOS_FOR_EXERCISE scenarios in which one of them judged
 * nothing fails, so that a draw that stopped reaching it cannot pass
 * unnoticed.
 */
export const EXERCISED_BY: Array<{
  invariants: Invariant[];
  what: string;
  count: (j: Judgement) => number;
}> = [
  {
    invariants: ['deleted-claim-a-new-statefulset-of-its-name-would-reattach'],
    what: "deletions judged against a StatefulSet of the claim's name deleted or re-created after the prune was sent",
    count: j => j.newStatefulSetJudged,
  },
  {
    invariants: ['volume-reclaimed-while-bound', 'reclaim-without-audit-event'],
    what: "volume reclaims judged (a replica set a volume's reclaim policy to Delete)",
    count: j => j.reclaims.reclaims,
  },
  {
    invariants: [
      'automatic-delete-of-entity-not-opted-in',
      'automatic-delete-of-kept-claim',
    ],
    what: 'automatic deletions judged (deletions no prune of the campaign confirmed)',
    count: j => j.autoPrune.deletions,
  },
  {
    invariants: ['automatic-delete-of-entity-not-opted-in'],
    what: 'orphans of opted-in StatefulSets that a claimant not opted in (or an invalid opt-in) kept from automation, still there when the runs had gone on past the grace',
    count: j => j.autoPrune.notOptedInExposed,
  },
  {
    invariants: ['automatic-delete-of-kept-claim'],
    what: 'kept orphans (annotation or card) of StatefulSets every claimant opted in, still there when the runs had gone on past the grace',
    count: j => j.autoPrune.keptExposed,
  },
  {
    invariants: ['opted-in-orphan-never-pruned'],
    what: 'orphans of StatefulSets every claimant opted in that nothing the scenario drew kept from automation, awaited until the runs deleted them',
    count: j => j.autoPrune.awaited,
  },
];
export const MIN_SCENARIOS_FOR_EXERCISE = 24;

/** The invariants a run of enough scenarios never exercised. */
export function unexercised(results: ScenarioResult[]): Invariant[] {
  if (results.length < MIN_SCENARIOS_FOR_EXERCISE) return [];
  return [
    ...new Set(
      EXERCISED_BY.filter(e =>
        results.every(r => e.count(r.judgement) === 0),
      ).flatMap(e => e.invariants),
    ),
  ];
}

/**
 * Issue 19's draws, by how many scenarios exercised each (a draw that
 * never ran shows 0): counted from what each scenario did, not what it drew.
 */
const ISSUE_19_DRAWS: Array<[string, (r: ScenarioResult) => boolean]> = [
  [
    'a StatefulSet deleted and re-created under its name while jobs ran',
    r =>
      Object.keys(r.run.faults).some(k =>
        /^chaos: (re)?create-statefulset$/.test(k),
      ),
  ],
  [
    'claims left behind by a StatefulSet deleted before the scan',
    r =>
      'cluster: StatefulSet deleted before the scan, claims left' in
      r.run.faults,
  ],
  [
    '…offered by the card (GET /v1/left-behind)',
    r =>
      Object.keys(r.run.faults).some(k => k.startsWith('left behind: offered')),
  ],
  [
    '…pruned (a left-behind claim deleted)',
    r => r.judgement.leftBehindDeletions > 0,
  ],
  [
    'a Retain claim pruned, its volume Released',
    r =>
      r.run.policyChanges.length > 0 ||
      r.run.deletions.some(
        d =>
          d.volume?.reclaimPolicy === 'Retain' && d.claim && !d.request.dryRun,
      ),
  ],
  [
    'a reclaim sent (POST /v1/reclaim-jobs)',
    r => r.run.reclaims.some(x => !x.dryRun),
  ],
  ['a reclaim dry run sent', r => r.run.reclaims.some(x => x.dryRun)],
  ['a volume reclaimed', r => r.judgement.reclaims.reclaims > 0],
  [
    'a reclaim raced by the cluster',
    r => Object.keys(r.run.faults).some(k => k.startsWith('reclaim race:')),
  ],
];

export function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[
    Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)
  ];
}

const ms = (v: number | undefined) =>
  v === undefined ? 'n/a' : `${v.toFixed(v < 10 ? 1 : 0)} ms`;

export function replayCommand(seed: number, replicas: number) {
  return `npm run campaign -- --replay ${seed}${
    replicas !== 2 ? ` --replicas ${replicas}` : ''
  }`;
}

export function formatReport(
  results: ScenarioResult[],
  options: { seed?: number; replicas: number; wallMs: number },
): string {
  const lines: string[] = [];
  const add = (line = '') => lines.push(line);
  const sum = (f: (r: ScenarioResult) => number) =>
    results.reduce((n, r) => n + f(r), 0);
  const merge = (f: (r: ScenarioResult) => Record<string, number>) => {
    const total: Record<string, number> = {};
    for (const r of results)
      for (const [k, v] of Object.entries(f(r))) total[k] = (total[k] ?? 0) + v;
    return total;
  };
  const failed = results.filter(r => r.judgement.violations.length > 0);
  add(
    `Safety campaign: ${results.length} scenarios${
      options.seed !== undefined ? `, seed ${options.seed}` : ''
    }, ${options.replicas} backend replicas, ${(options.wallMs / 60000).toFixed(
      1,
    )} min`,
  );
  const faults = merge(r => r.run.faults);
  add('Draws, faults and chaos injected:');
  for (const kind of Object.keys(faults).sort())
    add(`  ${kind.padEnd(32)} ${faults[kind]}`);
  add(
    `Prune requests sent: ${sum(r => r.run.sent.length)} (${sum(
      r => r.run.sent.filter(s => s.outcome.kind === 'accepted').length,
    )} accepted, ${sum(
      r => r.run.sent.filter(s => s.outcome.kind === 'refused').length,
    )} refused, ${sum(
      r => r.run.sent.filter(s => s.outcome.kind === 'unknown').length,
    )} unanswered)`,
  );
  const refusals = merge(r => {
    const byStatus: Record<string, number> = {};
    for (const s of r.run.sent)
      if (s.outcome.kind === 'refused')
        byStatus[s.outcome.status] = (byStatus[s.outcome.status] ?? 0) + 1;
    return byStatus;
  });
  add(
    `Refused by status: ${
      Object.entries(refusals)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }`,
  );
  add(
    `Prunes refused for a claimant the user may not prune: ${sum(
      r => r.judgement.refusedForClaimant.atRequest,
    )} with a 403 naming it, ${sum(
      r => r.judgement.refusedForClaimant.byJob,
    )} by their job (its catalog read when it started is newer than the request's, or the StatefulSet's labels changed during it)`,
  );
  const statuses = merge(r => r.judgement.jobsByStatus);
  add(
    `Jobs by terminal status: ${
      Object.entries(statuses)
        .sort()
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }`,
  );
  const syncs = results.flatMap(r => r.run.catalogSyncsMs);
  add(
    `Catalog changes (the scenario's entities in, then out, served by every replica): ${
      syncs.length
    }, p50 ${ms(percentile(syncs, 50))}, max ${ms(
      syncs.length ? Math.max(...syncs) : undefined,
    )}`,
  );
  const durations = results.flatMap(r => r.judgement.jobDurationsMs);
  add(
    `Job duration: p50 ${ms(percentile(durations, 50))}, p95 ${ms(
      percentile(durations, 95),
    )}`,
  );
  add(
    `Claim deletions (API server's record, dry runs excluded): ${sum(
      r => r.judgement.deletions,
    )}`,
  );
  const windows = results.flatMap(r => r.judgement.windowsMs);
  const roundTrips = results.flatMap(r => r.judgement.roundTripsMs);
  add(
    `A round trip of the re-check (yardstick): p50 ${ms(
      percentile(roundTrips, 50),
    )}, p99 ${ms(percentile(roundTrips, 99))}`,
  );
  add(
    `Last live check → delete sent: p50 ${ms(
      percentile(windows, 50),
    )}, p99 ${ms(percentile(windows, 99))}, max ${ms(
      windows.length ? Math.max(...windows) : undefined,
    )} (${windows.length} deletions)`,
  );
  add(
    `Claims that became in use after the last check read what would show it, before their delete was sent (not a violation: the check-to-delete window): ${sum(
      r => r.judgement.inUseAfterLastCheck,
    )}`,
  );
  add(
    `Claims that became in use while their delete was on the wire (not a violation): ${sum(
      r => r.judgement.inUseDuringFlight,
    )}`,
  );
  const keptLate = merge(r => r.judgement.keptAfterLastCheck);
  const keptInFlight = merge(r => r.judgement.keptDuringFlight);
  const rules = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || '0';
  add(
    `Claims kept (paused, autoscaler range, claimants) only from after the last check read what would show it (not a violation): ${rules(
      keptLate,
    )}; from while the delete was on the wire: ${rules(keptInFlight)}`,
  );
  add(
    `Deletions an interrupted job announced but could not log the outcome of (its process was killed or frozen): ${sum(
      r => r.judgement.lostWithKilledReplica,
    )}`,
  );
  add(
    `Undo window: ${sum(
      r => r.judgement.snapshots.jobs,
    )} jobs asked for snapshots (dry runs excluded); their deletions judged against the snapshots ready when each arrived: ${sum(
      r => r.judgement.snapshots.deletionsJudged,
    )} (${sum(
      r => r.judgement.snapshots.retainExempt,
    )} of Retain volumes, exempt); claims they confirmed that were kept, by their snapshot's record: ${rules(
      merge(r => r.judgement.snapshots.keptBecause),
    )}`,
  );
  add(
    `Deletions judged against a StatefulSet of the claim's name deleted or re-created after the prune was sent: ${sum(
      r => r.judgement.newStatefulSetJudged,
    )}`,
  );
  add(
    `Volume reclaims judged (a replica set a volume's reclaim policy to Delete): ${sum(
      r => r.judgement.reclaims.reclaims,
    )} (${sum(
      r => r.judgement.reclaims.deletedAfter,
    )} then deleted by their provisioner within the scenario)`,
  );
  add(
    `Automatic pruning: ${
      results.filter(r => r.run.scenario.autoPrune).length
    } scenarios opted an entity in; ${sum(
      r => r.judgement.autoPrune.deletions,
    )} automatic deletions judged (no prune of the campaign confirmed them); ${sum(
      r => r.judgement.autoPrune.keptAfterLastRead,
    )} of a claim annotated keep only after the plugin's last read of it (not a violation: the check-to-delete window); ${sum(
      r => r.judgement.autoPrune.statefulSetGoneAfterLastRead,
    )} whose StatefulSet went after the plugin's last read of it (not judged for claimants); card keeps acknowledged: ${sum(
      r =>
        r.run.autoPruneRecords.cardKeeps.filter(
          k => k.kind === 'keep' && k.status === 201,
        ).length,
    )}, un-keeps: ${sum(
      r =>
        r.run.autoPruneRecords.cardKeeps.filter(
          k => k.kind === 'unkeep' && k.status === 204,
        ).length,
    )}, keep annotations written: ${sum(
      r => r.run.autoPruneRecords.keepAnnotations.length,
    )}`,
  );
  add("Issue 19's draws, by scenarios that exercised each:");
  for (const [what, did] of ISSUE_19_DRAWS)
    add(`  ${what.padEnd(70)} ${results.filter(did).length}`);
  add("Issue 19's and 20's invariants exercised:");
  for (const e of EXERCISED_BY)
    add(
      `  ${e.what}: ${sum(r => e.count(r.judgement))} (in ${
        results.filter(r => e.count(r.judgement) > 0).length
      } scenarios)`,
    );
  add('Violations by invariant:');
  const all: Violation[] = results.flatMap(r => r.judgement.violations);
  for (const invariant of INVARIANTS)
    add(
      `  ${invariant.padEnd(58)} ${
        all.filter(v => v.invariant === invariant).length
      }`,
    );
  if (failed.length > 0) {
    add('Failures:');
    for (const f of failed) {
      add(
        `  scenario ${f.index} (seed ${f.seed}): ${replayCommand(
          f.seed,
          options.replicas,
        )}`,
      );
      for (const v of f.judgement.violations.slice(0, 5))
        add(`    ${v.invariant}: ${v.detail}`);
      if (f.judgement.violations.length > 5)
        add(`    … and ${f.judgement.violations.length - 5} more`);
    }
  }
  for (const invariant of unexercised(results))
    add(
      `NEVER EXERCISED in ${results.length} scenarios: ${invariant} (the run fails: a draw no longer reaches it)`,
    );
  add(`${results.length - failed.length} passed, ${failed.length} failed`);
  return lines.join('\n');
}
