/**
 * A scenario: a namespace's StatefulSets, claims and pods, the prune requests
 * a user sends, and what goes wrong meanwhile. Pure data, drawn from one
 * seeded Random, so a scenario replays exactly from its seed.
 */
import { Random } from './random';

export interface StatefulSetPlan {
  name: string;
  templates: string[];
  start: number;
  replicas: number;
  /** Ordinals that have claims: the running ones and the orphans, above or below the range. */
  claimOrdinals: number[];
  podManagementPolicy: 'OrderedReady' | 'Parallel';
  retention: {
    whenScaled: 'Retain' | 'Delete';
    whenDeleted: 'Retain' | 'Delete';
  };
}

export interface ClaimPlan {
  name: string;
  reclaimPolicy: 'Retain' | 'Delete';
  /** Held by acc.example/backup-hold: stays Terminating after a delete. */
  foreignFinalizer: boolean;
}

export interface PodPlan {
  name: string;
  claim: string;
  /** Deleted at once with this grace period: a terminating pod that still mounts the claim. */
  terminatingGraceSeconds?: number;
}

/** What the user adds to the orphans the scan offered (a stale or careless confirmation). */
export type ExtraConfirmation =
  | 'in-use'
  | 'mounted'
  | 'non-canonical'
  | 'stale-uid'
  | 'sibling';

export interface PruneRequestPlan {
  atMs: number;
  statefulSet: string;
  /** Index into the replicas. */
  replica: number;
  /** Fraction of the offered orphans confirmed. */
  share: number;
  extras: ExtraConfirmation[];
  dryRun: boolean;
}

export type ChaosEvent = { atMs: number } & (
  | { kind: 'scale'; statefulSet: string; replicas: number }
  | { kind: 'set-start'; statefulSet: string; start: number }
  | { kind: 'recreate-statefulset'; statefulSet: string }
  | { kind: 'recreate-orphan'; claim: string }
  | { kind: 'mount-orphan'; claim: string }
);

export type ApiFault = { atMs: number } & (
  | {
      kind: '5xx' | '429' | 'latency';
      durationMs: number;
      verb?: string;
      resource?: string;
      status?: number;
      rate?: number;
      latencyMs?: number;
      retryAfterSeconds?: number;
    }
  | { kind: 'dropped-watches' }
  | { kind: 'compaction' }
);

export type ProcessFault =
  | { kind: 'kill-9'; atMs: number; restartAfterMs: number }
  | { kind: 'sigstop'; atMs: number; forMs: number };

export interface Scenario {
  seed: number;
  namespace: string;
  statefulSets: StatefulSetPlan[];
  claims: ClaimPlan[];
  pods: PodPlan[];
  requests: PruneRequestPlan[];
  chaos: ChaosEvent[];
  apiFaults: ApiFault[];
  /** Aimed at the replica of the first request, the one running its job. */
  processFault?: ProcessFault;
}

const BASES = ['db', 'web', 'cache', 'queue'];
const TEMPLATES = ['data', 'wal', 'logs'];
const VERBS = ['get', 'list', 'delete', 'update', 'create', 'watch', undefined];
const RESOURCES = [
  'persistentvolumeclaims',
  'pods',
  'leases',
  'statefulsets',
  'persistentvolumes',
  undefined,
];

export function claimName(template: string, sts: string, ordinal: number) {
  return `${template}-${sts}-${ordinal}`;
}

/** Draws the scenario of `seed`; `leaseDurationSeconds` sizes the freeze. */
export function generateScenario(
  seed: number,
  options: { replicas: number; leaseDurationSeconds: number },
): Scenario {
  const random = new Random(seed);
  const namespace = `campaign-${seed.toString(36)}`;
  const statefulSets: StatefulSetPlan[] = [];
  const base = random.pick(BASES);
  const names = [base];
  // Siblings whose names are prefixes of each other: web, web-2 (data-web-2-0 is web-2's).
  if (random.chance(0.5)) names.push(`${base}-${random.int(0, 3)}`);
  if (random.chance(0.3))
    names.push(random.pick(BASES.filter(b => b !== base)));
  for (const name of names) {
    const start = random.chance(0.5) ? 0 : random.int(1, 4);
    const replicas = random.int(0, 3);
    const templates = TEMPLATES.slice(0, random.int(1, 3));
    const running = Array.from({ length: replicas }, (_, i) => start + i);
    const above = Array.from(
      { length: random.int(0, 4) },
      (_, i) => start + replicas + i,
    );
    const below = random.some(
      Array.from({ length: start }, (_, i) => i),
      0.5,
    );
    statefulSets.push({
      name,
      templates,
      start,
      replicas,
      claimOrdinals: [...below, ...running, ...above],
      podManagementPolicy: random.chance(0.5) ? 'OrderedReady' : 'Parallel',
      retention: {
        whenScaled: random.chance(0.25) ? 'Delete' : 'Retain',
        whenDeleted: random.chance(0.25) ? 'Delete' : 'Retain',
      },
    });
  }
  const claims: ClaimPlan[] = [];
  const orphans: string[] = [];
  for (const sts of statefulSets) {
    for (const ordinal of sts.claimOrdinals) {
      const orphan = ordinal < sts.start || ordinal >= sts.start + sts.replicas;
      for (const template of sts.templates) {
        const name = claimName(template, sts.name, ordinal);
        if (orphan) orphans.push(name);
        claims.push({
          name,
          reclaimPolicy: random.chance(0.3) ? 'Retain' : 'Delete',
          foreignFinalizer: orphan && random.chance(0.1),
        });
      }
    }
    // Names with a non-canonical ordinal: never one of this StatefulSet's.
    if (random.chance(0.3)) {
      const odd = random.pick(['01', '1a', 'x1', '007']);
      claims.push({
        name: `${sts.templates[0]}-${sts.name}-${odd}`,
        reclaimPolicy: 'Delete',
        foreignFinalizer: false,
      });
    }
  }
  const pods: PodPlan[] = [];
  for (const orphan of random.some(orphans, 0.15))
    pods.push({ name: `backup-${pods.length}`, claim: orphan });
  for (const orphan of random.some(orphans, 0.1))
    pods.push({
      name: `old-${pods.length}`,
      claim: orphan,
      terminatingGraceSeconds: random.int(200, 600),
    });

  const target = random.pick(statefulSets).name;
  const requests: PruneRequestPlan[] = [];
  const request = (statefulSet: string, atMs: number, replica: number) => ({
    atMs,
    statefulSet,
    replica,
    share: random.chance(0.6) ? 1 : 0.5,
    extras: (
      ['in-use', 'mounted', 'non-canonical', 'stale-uid', 'sibling'] as const
    ).filter(() => random.chance(0.12)),
    dryRun: random.chance(0.12),
  });
  const first = random.int(0, options.replicas - 1);
  requests.push(request(target, 0, first));
  // Two prune requests for one StatefulSet, to different replicas.
  if (random.chance(0.3))
    requests.push(
      request(
        target,
        random.int(0, 400),
        (first + random.int(1, Math.max(1, options.replicas - 1))) %
          options.replicas,
      ),
    );
  const others = statefulSets.filter(s => s.name !== target);
  if (others.length > 0 && random.chance(0.3))
    requests.push(
      request(
        random.pick(others).name,
        random.int(0, 600),
        random.int(0, options.replicas - 1),
      ),
    );

  const chaos: ChaosEvent[] = [];
  const chaosCount = random.int(0, 3);
  for (let i = 0; i < chaosCount; i++) {
    const atMs = random.int(0, 1500);
    const sts = random.chance(0.7)
      ? statefulSets.find(s => s.name === target)!
      : random.pick(statefulSets);
    const kind = random.pick([
      'scale',
      'scale-to-0-and-back',
      'set-start',
      'recreate-statefulset',
      'recreate-orphan',
      'mount-orphan',
    ] as const);
    const ownOrphans = orphans.filter(o =>
      sts.templates.some(t => o.startsWith(`${t}-${sts.name}-`)),
    );
    if (kind === 'scale')
      chaos.push({
        atMs,
        kind,
        statefulSet: sts.name,
        replicas: random.int(0, sts.replicas + 3),
      });
    else if (kind === 'scale-to-0-and-back') {
      chaos.push({ atMs, kind: 'scale', statefulSet: sts.name, replicas: 0 });
      chaos.push({
        atMs: atMs + random.int(100, 800),
        kind: 'scale',
        statefulSet: sts.name,
        replicas: random.int(1, sts.replicas + 3),
      });
    } else if (kind === 'set-start')
      chaos.push({
        atMs,
        kind,
        statefulSet: sts.name,
        start: random.int(0, 5),
      });
    else if (kind === 'recreate-statefulset')
      chaos.push({ atMs, kind, statefulSet: sts.name });
    else if (ownOrphans.length > 0)
      chaos.push({ atMs, kind, claim: random.pick(ownOrphans) });
  }
  chaos.sort((a, b) => a.atMs - b.atMs);

  const apiFaults: ApiFault[] = [];
  const faultCount = random.int(0, 2);
  for (let i = 0; i < faultCount; i++) {
    const atMs = random.int(0, 1000);
    const durationMs = random.int(300, 3000);
    const verb = random.pick(VERBS);
    const resource = random.pick(RESOURCES);
    const kind = random.pick([
      '5xx',
      '429',
      'latency',
      'dropped-watches',
      'compaction',
    ] as const);
    if (kind === '5xx')
      apiFaults.push({
        atMs,
        kind,
        durationMs,
        verb,
        resource,
        status: random.pick([500, 503, 504]),
        rate: random.pick([0.1, 0.3, 0.6]),
      });
    else if (kind === '429')
      apiFaults.push({
        atMs,
        kind,
        durationMs,
        verb,
        resource,
        rate: random.pick([0.2, 0.5]),
        retryAfterSeconds: random.int(1, 2),
      });
    else if (kind === 'latency')
      apiFaults.push({
        atMs,
        kind,
        durationMs,
        verb,
        resource,
        latencyMs: random.pick([20, 80, 250, 600]),
      });
    else apiFaults.push({ atMs, kind });
  }
  apiFaults.sort((a, b) => a.atMs - b.atMs);

  let processFault: ProcessFault | undefined;
  const p = random.next();
  if (p < 0.05)
    processFault = {
      kind: 'kill-9',
      atMs: random.int(0, 800),
      restartAfterMs: random.int(500, 3000),
    };
  else if (p < 0.13)
    processFault = {
      kind: 'sigstop',
      atMs: random.int(0, 800),
      forMs: options.leaseDurationSeconds * 1000 + random.int(500, 2500),
    };

  return {
    seed,
    namespace,
    statefulSets,
    claims,
    pods,
    requests,
    chaos,
    apiFaults,
    processFault,
  };
}
