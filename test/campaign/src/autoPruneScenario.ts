/**
 * Automatic pruning in a scenario (issue 20): what the replicas are told
 * (`pvcPruner.autoPrune`), and the draw of an opted-in entity with a short
 * grace, its StatefulSets, keeps made and unmade while the scheduled runs
 * go on, and the chaos and process faults that meet those runs.
 */
import {
  AUTO_PRUNE_ANNOTATION,
  KEEP_CLAIM_ANNOTATION,
  parseDuration,
} from 'backstage-plugin-pvc-pruner-common';
import { CLUSTER } from './backendClient';
import { labelsOf } from './cluster';
import { claims } from './ownership';
import type { Random } from './random';
import type {
  AutoProcessFault,
  AutoPrunePlan,
  ChaosEvent,
  KeepPlan,
  Scenario,
  SnapshotClassPlan,
  StatefulSetPlan,
} from './scenario';

/**
 * `pvcPruner.autoPrune` of every replica: on, a run every 2 s (one replica
 * per run), a floor of 2 s on any grace, owners told 3 s ahead, and limits
 * low enough (3 claims or 4 GiB of the campaign's 1 GiB claims per run)
 * that a scenario with several eligible orphans meets them.
 */
export const AUTO_PRUNE_SETTINGS = {
  scheduleSeconds: 2,
  /** A run of a killed replica blocks the next ones until this runs out. */
  timeoutSeconds: 20,
  minimumGrace: '2s',
  notifyBefore: '3s',
  maxClaimsPerRun: 3,
  maxBytesPerRun: 4 * 1024 ** 3,
};

/** The `pvcPruner.autoPrune` block of a replica's config. */
export function autoPruneConfig() {
  const s = AUTO_PRUNE_SETTINGS;
  return {
    enabled: true,
    schedule: {
      frequency: { seconds: s.scheduleSeconds },
      // Merged key by key over app-config.yaml's `timeout: { minutes: 2 }`: without minutes: 0 it is 2 min 20 s.
      timeout: { minutes: 0, seconds: s.timeoutSeconds },
    },
    minimumGrace: s.minimumGrace,
    notifyBefore: s.notifyBefore,
    maxClaimsPerRun: s.maxClaimsPerRun,
    maxBytesPerRun: s.maxBytesPerRun,
  };
}

/**
 * The grace an entity's opt-in annotation sets, as the oracle reads it
 * (written apart from the plugin's verdict): undefined when absent, not a
 * duration, or below the replicas' minimumGrace.
 */
export function optedInGraceMs(
  annotations: Record<string, string>,
  minimumGraceMs = parseDuration(AUTO_PRUNE_SETTINGS.minimumGrace)!,
): number | undefined {
  const value = annotations[AUTO_PRUNE_ANNOTATION];
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  return ms !== undefined && ms >= minimumGraceMs ? ms : undefined;
}

/** Whether a claim's annotations keep it (`pvc-pruner.backstage.io/keep`, any value but `false`). */
export function keptByAnnotation(annotations?: Record<string, string>) {
  const value = annotations?.[KEEP_CLAIM_ANNOTATION];
  return value !== undefined && value.trim().toLowerCase() !== 'false';
}

/** Names no other draw gives a StatefulSet. */
const AUTO_NAMES = ['store', 'vault'];
const TEMPLATES = ['data', 'wal'];

/** The opt-in's value: mostly the grace, sometimes below minimumGrace (10%) or unreadable (5%). */
function drawAnnotation(random: Random, graceMs: number): string {
  const p = random.next();
  if (p < 0.1) return '1s';
  if (p < 0.15) return random.pick(['soon', '7 days', '-5s', '0s']);
  return `${graceMs / 1000}s`;
}

/**
 * In about a third of the scenarios: one or two StatefulSets of the
 * scenario's own kubernetes-id with orphans above their replicas, claimed
 * by an entity of the user's team that opts in with a grace of 3–6 s
 * (sometimes below minimumGrace, or unreadable: then nothing may be
 * automated); sometimes a second claimant of one of them, selecting it by
 * its app label, opted in too or not; keeps by annotation and through the
 * card, some undone or ending; orphans brought back into use, paused,
 * autoscaled or re-created during the grace; and a replica killed or
 * stopped around when the first claims become eligible.
 */
export function drawAutoPrune(
  random: Random,
  scenario: Scenario,
  options: { replicas: number; leaseDurationSeconds: number },
) {
  if (!random.chance(0.3)) return;
  const ns = scenario.namespace;
  const kubernetesId = `${ns}-auto`;
  const graceMs = random.int(3, 6) * 1000;
  const annotation = drawAnnotation(random, graceMs);
  const plans: StatefulSetPlan[] = [];
  const orphans: string[] = [];
  for (const name of AUTO_NAMES.slice(0, random.int(1, 2))) {
    const replicas = random.int(1, 2);
    const plan: StatefulSetPlan = {
      name,
      team: 'auto',
      kubernetesId,
      templates: TEMPLATES.slice(0, random.int(1, 2)),
      start: 0,
      replicas,
      claimOrdinals: Array.from(
        { length: replicas + random.int(1, 3) },
        (_, i) => i,
      ),
      podManagementPolicy: 'Parallel',
      retention: { whenScaled: 'Retain', whenDeleted: 'Retain' },
    };
    plans.push(plan);
    scenario.statefulSets.push(plan);
    for (const ordinal of plan.claimOrdinals)
      for (const template of plan.templates) {
        const claim = `${template}-${name}-${ordinal}`;
        const orphan = ordinal >= replicas;
        if (orphan) orphans.push(claim);
        const q = random.next();
        let snapshotClass: SnapshotClassPlan | undefined;
        if (q < 0.1) snapshotClass = 'none';
        else if (q < 0.3) snapshotClass = 'mapped-retain';
        scenario.claims.push({
          name: claim,
          reclaimPolicy: random.chance(0.2) ? 'Retain' : 'Delete',
          ...(snapshotClass ? { snapshotClass } : {}),
          foreignFinalizer: orphan && random.chance(0.1),
        });
      }
  }
  scenario.entities.push({
    name: `${ns}-auto`,
    owner: 'group:default/checkout',
    kind: 'auto-prune',
    ownedByUser: true,
    annotations: {
      'backstage.io/kubernetes-id': kubernetesId,
      'backstage.io/kubernetes-namespace': ns,
      [AUTO_PRUNE_ANNOTATION]: annotation,
    },
  });
  let secondClaimant: AutoPrunePlan['secondClaimant'];
  if (random.chance(0.35)) {
    const statefulSet = random.pick(plans).name;
    const also = random.chance(0.35) ? `${random.int(3, 6)}s` : undefined;
    secondClaimant = {
      entity: `${ns}-also`,
      statefulSet,
      ...(also ? { annotation: also } : {}),
    };
    scenario.entities.push({
      name: `${ns}-also`,
      owner: 'group:default/checkout',
      kind: 'second-claimant',
      ownedByUser: true,
      annotations: {
        'backstage.io/kubernetes-label-selector': `app=${statefulSet}`,
        'backstage.io/kubernetes-namespace': ns,
        ...(also ? { [AUTO_PRUNE_ANNOTATION]: also } : {}),
      },
    });
  }

  // In half the scenarios the draws below leave one StatefulSet alone, so
  // that the runs meet orphans they must prune while chaos goes on beside them.
  const quiet = random.chance(0.5) ? plans[0] : undefined;
  const disturbed = plans.filter(p => p !== quiet);
  const disturbable = orphans.filter(o => !quiet || !namesClaim(quiet, o));

  const keeps: KeepPlan[] = [];
  const keepCount = disturbable.length ? random.int(0, 3) : 0;
  for (let i = 0; i < keepCount; i++) {
    const claim = random.pick(disturbable);
    const atMs = random.int(0, graceMs + 2000);
    const replica = random.int(0, options.replicas - 1);
    if (random.chance(0.5)) {
      keeps.push({
        atMs,
        claim,
        kind: 'annotate',
        value: random.pick(['true', 'true', 'yes', 'false', ' FALSE ']),
      });
      if (random.chance(0.3))
        keeps.push({
          atMs: atMs + random.int(500, 4000),
          claim,
          kind: 'unannotate',
        });
    } else {
      keeps.push({
        atMs,
        claim,
        kind: 'card-keep',
        replica,
        ...(random.chance(0.3) ? { untilMs: random.int(1500, 5000) } : {}),
      });
      if (random.chance(0.3))
        keeps.push({
          atMs: atMs + random.int(500, 4000),
          claim,
          kind: 'card-unkeep',
          replica: random.int(0, options.replicas - 1),
        });
    }
  }
  keeps.sort((a, b) => a.atMs - b.atMs);

  const chaos: ChaosEvent[] = [];
  const sts = () => random.pick(disturbed);
  if (disturbed.length && random.chance(0.3)) {
    // An orphan comes back into use during the grace: scaled over it.
    const s = sts();
    chaos.push({
      atMs: random.int(0, graceMs),
      kind: 'scale',
      statefulSet: s.name,
      replicas: s.claimOrdinals.length,
    });
  }
  if (disturbable.length && random.chance(0.2))
    chaos.push({
      atMs: random.int(0, graceMs + 2000),
      kind: 'mount-orphan',
      claim: random.pick(disturbable),
    });
  if (disturbed.length && random.chance(0.12))
    chaos.push({
      atMs: random.int(0, graceMs + 2000),
      kind: 'scale',
      statefulSet: sts().name,
      replicas: 0,
    });
  if (disturbed.length && random.chance(0.12))
    chaos.push({
      atMs: random.int(0, graceMs + 2000),
      kind: 'recreate-statefulset',
      statefulSet: sts().name,
      ...(random.chance(0.5) ? { absentMs: random.int(100, 1500) } : {}),
    });
  if (disturbable.length && random.chance(0.12))
    chaos.push({
      atMs: random.int(0, graceMs + 2000),
      kind: 'recreate-orphan',
      claim: random.pick(disturbable),
    });
  if (disturbed.length && random.chance(0.12)) {
    const s = sts();
    chaos.push({
      atMs: random.int(0, graceMs + 2000),
      kind: 'create-autoscaler',
      autoscaler: {
        name: `${s.name}-hpa`,
        target: { kind: 'StatefulSet', name: s.name },
        minReplicas: 1,
        maxReplicas: s.claimOrdinals.length,
      },
    });
  }
  scenario.chaos.push(...chaos);
  scenario.chaos.sort((a, b) => a.atMs - b.atMs);

  const processFaults: AutoProcessFault[] = [];
  // A restart takes tens of seconds: drawn in few scenarios, for the CI run's time.
  if (random.chance(0.3)) {
    const replica = random.int(0, options.replicas - 1);
    const atMs = random.int(Math.max(0, graceMs - 1000), graceMs + 3000);
    processFaults.push(
      random.chance(0.5)
        ? {
            replica,
            kind: 'kill-9',
            atMs,
            restartAfterMs: random.int(500, 3000),
          }
        : {
            replica,
            kind: 'sigstop',
            atMs,
            forMs: options.leaseDurationSeconds * 1000 + random.int(500, 2500),
          },
    );
  }

  scenario.autoPrune = {
    entity: `${ns}-auto`,
    kubernetesId,
    annotation,
    statefulSets: plans.map(s => s.name),
    ...(secondClaimant ? { secondClaimant } : {}),
    keeps,
    processFaults,
    windowMs: graceMs + random.int(6000, 9000),
    awaited: [],
  };
  scenario.autoPrune.awaited = undisturbedOrphans(scenario);
}

/** The names of the StatefulSet's claims above the ordinals it runs. */
export function orphanNames(plan: StatefulSetPlan): string[] {
  return plan.claimOrdinals
    .filter(o => o >= plan.start + plan.replicas)
    .flatMap(o => plan.templates.map(t => `${t}-${plan.name}-${o}`));
}

/** Whether the StatefulSet's templates and name make the claim's name. */
export function namesClaim(plan: StatefulSetPlan, claim: string) {
  return plan.templates.some(t => claim.startsWith(`${t}-${plan.name}-`));
}

/**
 * The orphans of the opted-in StatefulSets that nothing the scenario draws
 * keeps from automation: every entity of the scenario that claims their
 * StatefulSet opted in validly; no chaos on that StatefulSet (scaled,
 * re-created, autoscaled, relabelled) or on them (mounted, re-created,
 * their snapshot deleted); no keep of theirs, kept or undone; a
 * VolumeSnapshotClass (the replicas require snapshots), and no slow or
 * failing snapshot. Process faults, API faults and a longer grace of a
 * second claimant only delay them.
 */
export function undisturbedOrphans(scenario: Scenario): string[] {
  const auto = scenario.autoPrune;
  if (!auto) return [];
  const touched = new Set<string>([
    ...auto.keeps.map(k => k.claim),
    ...scenario.snapshotBehaviours.map(b => b.claim),
  ]);
  for (const c of scenario.chaos) {
    if ('statefulSet' in c) touched.add(c.statefulSet);
    if ('claim' in c) touched.add(c.claim);
    if (c.kind === 'create-autoscaler') touched.add(c.autoscaler.target.name);
  }
  const automated = (plan: StatefulSetPlan) => {
    const statefulSet = {
      namespace: scenario.namespace,
      labels: labelsOf(plan.team, plan.name, plan.kubernetesId),
    };
    const claimants = scenario.entities
      .map(e => ({
        ref: `component:default/${e.name}`,
        annotations: e.annotations,
        visibleAt: 0,
      }))
      .filter(e => claims(e, statefulSet, CLUSTER));
    return (
      claimants.length > 0 &&
      claimants.every(e => optedInGraceMs(e.annotations) !== undefined)
    );
  };
  return scenario.statefulSets
    .filter(
      s =>
        auto.statefulSets.includes(s.name) &&
        !touched.has(s.name) &&
        automated(s),
    )
    .flatMap(orphanNames)
    .filter(
      name =>
        !touched.has(name) &&
        scenario.claims.some(
          c => c.name === name && c.snapshotClass !== 'none',
        ),
    );
}
