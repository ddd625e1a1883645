import { namesClaim, optedInGraceMs } from './autoPruneScenario';
import { scenarioSeed } from './random';
import { generateScenario } from './scenario';

const scenarios = Array.from({ length: 300 }, (_, i) =>
  generateScenario(scenarioSeed(20261201, i), {
    replicas: 2,
    leaseDurationSeconds: 3,
  }),
);
const automated = scenarios.filter(s => s.autoPrune);

describe('the draw of automatic pruning', () => {
  it('opts an entity in in about a third of the scenarios, mostly with a valid grace, sometimes an invalid one', () => {
    expect(automated.length).toBeGreaterThan(60);
    expect(automated.length).toBeLessThan(120);
    const valid = automated.filter(
      s =>
        optedInGraceMs({
          'pvc-pruner.backstage.io/auto-prune': s.autoPrune!.annotation,
        }) !== undefined,
    );
    expect(valid.length).toBeGreaterThan(automated.length / 2);
    expect(valid.length).toBeLessThan(automated.length);
  });

  it('gives each opted-in StatefulSet orphans, claimed by the entity through a kubernetes-id of its own, and lets the runs go on past the grace', () => {
    for (const s of automated) {
      const auto = s.autoPrune!;
      const entity = s.entities.find(e => e.name === auto.entity)!;
      expect(entity.annotations['backstage.io/kubernetes-id']).toBe(
        auto.kubernetesId,
      );
      for (const name of auto.statefulSets) {
        const plan = s.statefulSets.find(p => p.name === name)!;
        expect(plan.kubernetesId).toBe(auto.kubernetesId);
        expect(plan.claimOrdinals.length).toBeGreaterThan(plan.replicas);
      }
      const grace = optedInGraceMs(entity.annotations) ?? 0;
      expect(auto.windowMs).toBeGreaterThanOrEqual(grace + 5000);
      for (const keep of auto.keeps)
        expect(s.claims.some(c => c.name === keep.claim)).toBe(true);
      // No prune of the user's is sent for them: their deletions are automatic.
      expect(
        s.requests.some(r => auto.statefulSets.includes(r.statefulSet)),
      ).toBe(false);
    }
  });

  it('draws second claimants, keeps of both kinds, and process faults during the runs', () => {
    const seconds = automated.map(s => s.autoPrune!.secondClaimant);
    expect(seconds.some(c => c && !c.annotation)).toBe(true);
    expect(seconds.some(c => c?.annotation)).toBe(true);
    const keeps = automated.flatMap(s => s.autoPrune!.keeps.map(k => k.kind));
    for (const kind of ['annotate', 'unannotate', 'card-keep', 'card-unkeep'])
      expect(keeps).toContain(kind);
    const faults = automated.flatMap(s =>
      s.autoPrune!.processFaults.map(f => f.kind),
    );
    expect(faults).toContain('kill-9');
    expect(faults).toContain('sigstop');
  });

  it("awaits, in a fair share of the opted-in scenarios (several of the CI run's 24), orphans that no keep, chaos, snapshot fault or claimant holds back", () => {
    const awaiting = automated.filter(s => s.autoPrune!.awaited.length > 0);
    expect(awaiting.length).toBeGreaterThan(automated.length / 4);
    expect(
      scenarios.slice(0, 24).filter(s => s.autoPrune?.awaited.length),
    ).not.toHaveLength(0);
    for (const s of awaiting) {
      const auto = s.autoPrune!;
      for (const claim of auto.awaited) {
        const plan = s.statefulSets.find(p => namesClaim(p, claim))!;
        expect(auto.statefulSets).toContain(plan.name);
        expect(Number(claim.split('-').pop())).toBeGreaterThanOrEqual(
          plan.start + plan.replicas,
        );
        expect(auto.keeps.some(k => k.claim === claim)).toBe(false);
        expect(s.snapshotBehaviours.some(b => b.claim === claim)).toBe(false);
        expect(s.claims.find(c => c.name === claim)!.snapshotClass).not.toBe(
          'none',
        );
        for (const c of s.chaos) {
          expect('claim' in c && c.claim).not.toBe(claim);
          expect('statefulSet' in c && c.statefulSet).not.toBe(plan.name);
        }
        // A second claimant of its StatefulSet opted in too.
        const second = auto.secondClaimant;
        expect(
          second?.statefulSet !== plan.name || second.annotation !== undefined,
        ).toBe(true);
      }
      expect(
        optedInGraceMs({
          'pvc-pruner.backstage.io/auto-prune': auto.annotation,
        }),
      ).toBeDefined();
    }
  });
});
