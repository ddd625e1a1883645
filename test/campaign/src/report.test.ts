import { judge } from './oracle';
import { failedRun } from './runScenario';
import { generateScenario } from './scenario';
import { formatReport, ScenarioResult, unexercised } from './report';

/** `n` judged scenarios that exercised nothing of issue 19 (no deletion, no reclaim), but for `change`. */
function results(
  n: number,
  change: (r: ScenarioResult) => void = () => {},
): ScenarioResult[] {
  return Array.from({ length: n }, (_, index) => {
    const run = failedRun(
      generateScenario(index + 1, { replicas: 2, leaseDurationSeconds: 3 }),
      new Error('unused'),
    );
    run.harnessErrors = [];
    const result = { index, seed: index + 1, run, judgement: judge(run) };
    change(result);
    return result;
  });
}

/** What each of issue 19's and 20's figures is, set in one scenario of its own. */
const FIGURES = {
  newStatefulSet: (r: ScenarioResult) => (r.judgement.newStatefulSetJudged = 1),
  reclaims: (r: ScenarioResult) => (r.judgement.reclaims.reclaims = 2),
  automaticDeletions: (r: ScenarioResult) =>
    (r.judgement.autoPrune.deletions = 3),
  notOptedIn: (r: ScenarioResult) =>
    (r.judgement.autoPrune.notOptedInExposed = 1),
  kept: (r: ScenarioResult) => (r.judgement.autoPrune.keptExposed = 2),
  awaited: (r: ScenarioResult) => (r.judgement.autoPrune.awaited = 2),
};

/** 24 scenarios, each figure exercised by one of them but those named. */
function exercisingAllBut(...left: Array<keyof typeof FIGURES>) {
  const set = Object.entries(FIGURES)
    .filter(([name]) => !left.includes(name as keyof typeof FIGURES))
    .map(([, exercise]) => exercise);
  return results(24, r => set[r.index]?.(r));
}

describe("the report on issue 19's and 20's invariants", () => {
  it('names every invariant of issue 19 and 20 a run of 24 scenarios never exercised, and says the run fails', () => {
    const idle = results(24);
    expect(unexercised(idle)).toEqual([
      'deleted-claim-a-new-statefulset-of-its-name-would-reattach',
      'volume-reclaimed-while-bound',
      'reclaim-without-audit-event',
      'automatic-delete-of-entity-not-opted-in',
      'automatic-delete-of-kept-claim',
      'opted-in-orphan-never-pruned',
    ]);
    expect(formatReport(idle, { replicas: 2, wallMs: 1 })).toContain(
      'NEVER EXERCISED in 24 scenarios: volume-reclaimed-while-bound',
    );
  });

  it('is satisfied by one scenario that exercised each, and does not judge a shorter run', () => {
    expect(unexercised(exercisingAllBut())).toEqual([]);
    expect(unexercised(results(23))).toEqual([]);
  });

  it('needs automatic deletions and, apart, the situation each automatic invariant guards: a claimant not opted in, a kept claim, an orphan nothing kept', () => {
    expect(unexercised(exercisingAllBut('automaticDeletions'))).toEqual([
      'automatic-delete-of-entity-not-opted-in',
      'automatic-delete-of-kept-claim',
    ]);
    const neverKept = exercisingAllBut('kept');
    expect(unexercised(neverKept)).toEqual(['automatic-delete-of-kept-claim']);
    expect(formatReport(neverKept, { replicas: 2, wallMs: 1 })).toContain(
      'NEVER EXERCISED in 24 scenarios: automatic-delete-of-kept-claim',
    );
    expect(unexercised(exercisingAllBut('awaited'))).toEqual([
      'opted-in-orphan-never-pruned',
    ]);
  });
});
