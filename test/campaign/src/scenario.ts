/**
 * A scenario: a namespace's StatefulSets, claims and pods, the prune requests
 * a user sends, and what goes wrong meanwhile. Pure data, drawn from one
 * seeded Random, so a scenario replays exactly from its seed.
 */
import { drawAutoPrune } from './autoPruneScenario';
import { Random } from './random';

/**
 * Whose a StatefulSet is, by its `backstage.io/kubernetes-id` label: the
 * user's team's (`orders`, the demo's checkout Component), another team's
 * (`search-index`, the search team's), or nobody's (no such label).
 */
export type Team = 'checkout' | 'search' | 'none' | 'auto';

export const TEAM_IDS: Record<Team, string | undefined> = {
  checkout: 'orders',
  search: 'search-index',
  none: undefined,
  // The scenario's own kubernetes-id (StatefulSetPlan.kubernetesId): claimed by its opted-in entity.
  auto: undefined,
};

/** The demo's Component of the user's team, which claims every `orders` StatefulSet. */
export const USER_ENTITY = 'component:default/orders';

export interface StatefulSetPlan {
  name: string;
  team: Team;
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
  /** Its kubernetes-id when not its team's: a StatefulSet of the scenario's opted-in entity. */
  kubernetesId?: string;
  /**
   * Deleted once the cluster is seeded, before the user scans: with
   * `whenDeleted: Retain` its claims are left behind (`kubectl delete sts`).
   */
  deletedBeforeScan?: boolean;
  /**
   * With `deletedBeforeScan`: the user looked at the card while it still
   * existed, so a scan recorded its claims' lineage; otherwise only their
   * names and labels tell whose they were.
   */
  lineage?: boolean;
}

/**
 * The VolumeSnapshotClass a claim's volume gets (`src/cluster.ts`): the
 * driver's default (deletionPolicy Delete), one the replicas' config maps its
 * StorageClass to (deletionPolicy Retain), or none (a driver without a class:
 * with `snapshots.required` the claim is kept).
 */
export type SnapshotClassPlan = 'default-delete' | 'mapped-retain' | 'none';

export interface ClaimPlan {
  name: string;
  reclaimPolicy: 'Retain' | 'Delete';
  /** Of a volume whose reclaim policy is Delete (a Retain volume needs no snapshot); default-delete when unset. */
  snapshotClass?: SnapshotClassPlan;
  /** Held by acc.example/backup-hold: stays Terminating after a delete. */
  foreignFinalizer: boolean;
  /** Its labels (a StatefulSet's claims carry its template's). */
  labels?: Record<string, string>;
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
  | 'sibling'
  /** The claims the scan kept as paused, inside an autoscaler's range, or fitting another StatefulSet's name (an old tab, from before). */
  | 'kept';

/**
 * A catalog entity the scenario registers: one that over-claims (a
 * catch-all selector, or another team's kubernetes-id), owned by the user's
 * side or by another.
 */
export interface EntityPlan {
  /** Its name (kind Component, namespace default): unique to the scenario. */
  name: string;
  owner: string;
  /**
   * How it over-claims, for the report: a catch-all selector, or a borrowed
   * kubernetes-id; or the entity that opts its StatefulSets into automatic
   * pruning, or a second claimant of one of them.
   */
  kind: 'catch-all' | 'borrowed-id' | 'auto-prune' | 'second-claimant';
  ownedByUser: boolean;
  annotations: Record<string, string>;
}

/** An autoscaling/v2 HorizontalPodAutoscaler of the namespace. */
export interface AutoscalerPlan {
  name: string;
  /** What it scales: a StatefulSet of the scenario (or a Deployment of that name, a decoy). */
  target: { kind: 'StatefulSet' | 'Deployment'; name: string };
  minReplicas: number;
  maxReplicas: number;
}

export interface PruneRequestPlan {
  atMs: number;
  statefulSet: string;
  /** The entity the prune (and its scan) goes through. */
  via: string;
  /** Index into the replicas. */
  replica: number;
  /** Fraction of the offered orphans confirmed. */
  share: number;
  extras: ExtraConfirmation[];
  dryRun: boolean;
  /** The prune asks for a VolumeSnapshot of each claim (`snapshot: true`). */
  snapshot: boolean;
  /**
   * A prune of the claims a deleted StatefulSet left behind (`leftBy`), as
   * `GET /v1/left-behind` offered them; `typesNames`: for claims without
   * lineage, the user types each name (a careless one does not: a 400).
   */
  leftBehind?: { typesNames: boolean };
}

/**
 * Once the prunes have ended, the user reclaims the Released volumes that
 * `GET /v1/released-volumes` offers for this namespace, while the cluster
 * races it: a volume re-bound to a new claim, a volume changed (its
 * resourceVersion), a claim created again under a released one's name (a
 * new uid: the volume stays released from the old one), a StatefulSet
 * created again under a deleted one's name.
 */
export interface ReclaimPlan {
  replica: number;
  /** Fraction of the offered volumes confirmed. */
  share: number;
  dryRun: boolean;
  races: Array<{
    /** After the reclaim request is sent. */
    atMs: number;
    kind: 'rebind' | 'touch' | 'recreate-claim' | 'create-statefulset';
  }>;
}

/**
 * How the simulated CSI driver answers one claim's snapshot (a rule of
 * `sim.addSnapshotBehaviour`, by namespace and claim): ready after a delay
 * (simulated seconds; some past the replicas' `snapshots.timeoutSeconds`),
 * or failing with status.error.
 */
export interface SnapshotBehaviourPlan {
  claim: string;
  readyAfterSeconds?: number;
  error?: string;
}

export type ChaosEvent = { atMs: number } & (
  | { kind: 'scale'; statefulSet: string; replicas: number }
  | { kind: 'set-start'; statefulSet: string; start: number }
  /**
   * Deleted and created again under its name (a new uid), with its spec;
   * `replicas` changes the new one's, and it stays gone for `absentMs` first.
   */
  | {
      kind: 'recreate-statefulset';
      statefulSet: string;
      replicas?: number;
      absentMs?: number;
    }
  /** A StatefulSet deleted before the scan is created again under its name (a new uid): it takes back the claims its ordinals name. */
  | { kind: 'create-statefulset'; statefulSet: string; replicas: number }
  | { kind: 'recreate-orphan'; claim: string }
  | { kind: 'mount-orphan'; claim: string }
  | { kind: 'create-autoscaler'; autoscaler: AutoscalerPlan }
  | { kind: 'raise-autoscaler'; autoscaler: string; maxReplicas: number }
  /** The StatefulSet's kubernetes-id label changed: other entities claim it now. */
  | { kind: 'relabel'; statefulSet: string; team: Team }
  /**
   * Someone deletes the claim's VolumeSnapshot by hand: as soon as it is
   * created (while the job waits for it), or as soon as it is ready (before
   * the claim's delete). Armed at `atMs`; fires on the snapshot's first such moment.
   */
  | { kind: 'delete-snapshot'; claim: string; when: 'created' | 'ready' }
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
  autoscalers: AutoscalerPlan[];
  /** Registered in the catalog before the prunes are sent (and removed after the scenario). */
  entities: EntityPlan[];
  /** The entities are in the catalog when the user scans; otherwise they arrive between the scan and the prunes. */
  entitiesBeforeScan: boolean;
  requests: PruneRequestPlan[];
  chaos: ChaosEvent[];
  apiFaults: ApiFault[];
  /** Aimed at the replica of the first request, the one running its job. */
  processFault?: ProcessFault;
  /** Slow and failing snapshots, by claim. */
  snapshotBehaviours: SnapshotBehaviourPlan[];
  /** Released volumes reclaimed once the prunes have ended. */
  reclaim?: ReclaimPlan;
  /** Automatic pruning (issue 20): an opted-in entity, keeps, and how long the runs go on. */
  autoPrune?: AutoPrunePlan;
}

/**
 * What the owner does to keep a claim from automatic pruning, at `atMs`
 * after the prunes start: annotate it (`kubectl annotate pvc …
 * pvc-pruner.backstage.io/keep=<value>`; `false` keeps nothing), remove
 * the annotation, keep it through the card (`POST /v1/claim-keeps`, maybe
 * until a moment later), or stop keeping it (`DELETE /v1/claim-keeps/{uid}`).
 */
export type KeepPlan = { atMs: number; claim: string } & (
  | { kind: 'annotate'; value: string }
  | { kind: 'unannotate' }
  | { kind: 'card-keep'; replica: number; untilMs?: number }
  | { kind: 'card-unkeep'; replica: number }
);

/** A replica killed (and restarted) or stopped while automatic runs go on. */
export type AutoProcessFault = ProcessFault & { replica: number };

/**
 * Automatic pruning: StatefulSets of the scenario's own kubernetes-id,
 * claimed by an entity that opts in with a short grace (sometimes one that
 * is invalid: below the replicas' minimumGrace, or unreadable), sometimes
 * also claimed by a second entity (opted in too, or not: then that
 * StatefulSet must never be pruned automatically); keeps made and unmade
 * while the runs go on; and chaos and process faults meanwhile.
 */
export interface AutoPrunePlan {
  /** The opted-in entity's name (a Component of the user's team). */
  entity: string;
  /** The kubernetes-id its StatefulSets carry. */
  kubernetesId: string;
  /** Its `pvc-pruner.backstage.io/auto-prune` value as written. */
  annotation: string;
  /** The StatefulSets it opts in. */
  statefulSets: string[];
  /** A second entity claiming one of them, by a selector on its app label; `annotation` when it opted in too. */
  secondClaimant?: { entity: string; statefulSet: string; annotation?: string };
  keeps: KeepPlan[];
  /** Replicas killed or stopped while the runs go on. */
  processFaults: AutoProcessFault[];
  /** How long after the prunes start the scenario lets the automatic runs go on. */
  windowMs: number;
  /**
   * Orphans that nothing the scenario draws keeps from automation
   * (src/autoPruneScenario.ts): the automatic runs must delete them, chaos
   * and process faults meanwhile. The window stays open until they have.
   */
  awaited: string[];
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
      team: 'checkout',
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
  const request = (
    statefulSet: string,
    atMs: number,
    replica: number,
  ): PruneRequestPlan => ({
    atMs,
    statefulSet,
    via: USER_ENTITY,
    replica,
    share: random.chance(0.6) ? 1 : 0.5,
    extras: (
      ['in-use', 'mounted', 'non-canonical', 'stale-uid', 'sibling'] as const
    ).filter(() => random.chance(0.12)),
    dryRun: random.chance(0.12),
    snapshot: false,
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

  const scenario: Scenario = {
    seed,
    namespace,
    statefulSets,
    claims,
    pods,
    autoscalers: [],
    entities: [],
    entitiesBeforeScan: false,
    requests,
    chaos,
    apiFaults,
    processFault,
    snapshotBehaviours: [],
  };
  // The draws of ownership and autoscaling come from a stream of their own,
  // so that the draws above stay what they were for every seed.
  drawOwnership(new Random(seed ^ 0x5f3759df), scenario, target);
  drawAutoscalers(new Random(seed ^ 0x2545f491), scenario, target);
  drawRelabel(new Random(seed ^ 0x1b873593), scenario, target);
  drawLookalike(new Random(seed ^ 0x68e31da4), scenario, target);
  drawSnapshots(new Random(seed ^ 0x3c6ef372), scenario, orphans);
  drawStatefulSetLifecycle(
    new Random(seed ^ 0x7f4a7c15),
    scenario,
    target,
    options.replicas,
  );
  drawReclaim(new Random(seed ^ 0x4f1bbcdc), scenario, options.replicas);
  drawAutoPrune(new Random(seed ^ 0x2f8a1b37), scenario, options);
  return scenario;
}

/**
 * StatefulSets deleted and created again under their name (issue 19): the
 * target re-created while its jobs run, maybe with more replicas and after
 * a while gone; and a StatefulSet deleted before the user scans, whose
 * claims are left behind (`whenDeleted: Retain`, Kubernetes' default),
 * sometimes created again under its name while the jobs run, so that its
 * ordinals take back the claims they name. The left-behind claims'
 * volumes are often Retain: what a prune of them leaves Released.
 */
function drawStatefulSetLifecycle(
  random: Random,
  scenario: Scenario,
  target: string,
  replicaCount: number,
) {
  const sts = scenario.statefulSets.find(s => s.name === target)!;
  if (random.chance(0.3)) {
    scenario.chaos.push({
      atMs: random.int(0, 1200),
      kind: 'recreate-statefulset',
      statefulSet: target,
      ...(random.chance(0.5)
        ? { replicas: sts.replicas + random.int(1, 3) }
        : {}),
      ...(random.chance(0.5) ? { absentMs: random.int(100, 1500) } : {}),
    });
  }
  const free = BASES.filter(
    b => !scenario.statefulSets.some(s => s.name === b),
  );
  if (free.length > 0 && random.chance(0.45)) {
    const name = random.pick(free);
    const replicas = random.int(1, 3);
    const left: StatefulSetPlan = {
      name,
      team: 'checkout',
      templates: TEMPLATES.slice(0, random.int(1, 2)),
      start: 0,
      replicas,
      claimOrdinals: Array.from(
        { length: replicas + random.int(0, 2) },
        (_, i) => i,
      ),
      podManagementPolicy: 'Parallel',
      retention: { whenScaled: 'Retain', whenDeleted: 'Retain' },
      deletedBeforeScan: true,
    };
    scenario.statefulSets.push(left);
    for (const ordinal of left.claimOrdinals)
      for (const template of left.templates)
        scenario.claims.push({
          name: claimName(template, name, ordinal),
          reclaimPolicy: random.chance(0.75) ? 'Retain' : 'Delete',
          foreignFinalizer: false,
          // Its template's labels: what ties a claim without lineage to the user's entity.
          labels: {
            'backstage.io/kubernetes-id': TEAM_IDS.checkout!,
            app: name,
          },
        });
    if (random.chance(0.3))
      scenario.chaos.push({
        atMs: random.int(0, 1200),
        kind: 'create-statefulset',
        statefulSet: name,
        replicas: replicas + random.int(0, 2),
      });
    left.lineage = random.chance(0.7);
    // The user prunes what it left behind, through the team's entity.
    if (random.chance(0.9))
      scenario.requests.push({
        atMs: random.int(0, 600),
        statefulSet: name,
        via: USER_ENTITY,
        replica: random.int(0, replicaCount - 1),
        share: random.chance(0.6) ? 1 : 0.5,
        extras: [],
        dryRun: random.chance(0.12),
        snapshot: scenario.requests[0].snapshot,
        leftBehind: { typesNames: random.chance(0.9) },
      });
  }
  scenario.chaos.sort((a, b) => a.atMs - b.atMs);
}

const OTHER_OWNERS = [
  'group:default/search',
  'group:default/payments',
  'user:default/mallory',
];
const USER_OWNERS = ['group:default/checkout', 'user:default/guest'];
/** Selectors that claim (nearly) every StatefulSet; the last is unreadable, which the plugin takes as claiming all. */
const CATCH_ALLS = [
  '!nonexistent',
  'app notin (nothing)',
  'app',
  `backstage.io/kubernetes-id notin (none)`,
  'app in (',
];

/**
 * Entities that over-claim, in both directions: another team's on the
 * user's StatefulSets (the user's prune is refused, naming it), and the
 * user's own on another team's StatefulSet (a prune through it is refused),
 * or on nobody's (allowed: the demo's user holds pvc-pruner.unowned.prune),
 * or on the user's own (allowed: the user owns every claimant).
 */
function drawOwnership(random: Random, scenario: Scenario, target: string) {
  if (!random.chance(0.35)) return;
  const { namespace, statefulSets, requests } = scenario;
  const count = random.int(1, 2);
  for (let i = 0; i < count; i++) {
    const ownedByUser = random.chance(0.6);
    const kind = random.chance(0.6) ? 'catch-all' : 'borrowed-id';
    const annotations: Record<string, string> = {};
    if (kind === 'catch-all')
      annotations['backstage.io/kubernetes-label-selector'] =
        random.pick(CATCH_ALLS);
    else
      annotations['backstage.io/kubernetes-id'] = ownedByUser
        ? 'search-index'
        : 'orders';
    // The user's own is scoped to the scenario's namespace or cluster, or not
    // at all (the catch-all has no namespace annotation). Another
    // team's is kept to the namespace: the plugin's warm catalog read (up to
    // 10 s old, refreshed only by a request after that) would otherwise go on
    // refusing the next scenarios' prunes for it after it has left the catalog.
    const scope = random.next();
    if (!ownedByUser || scope < 0.6)
      annotations['backstage.io/kubernetes-namespace'] = namespace;
    else if (scope < 0.7)
      annotations['backstage.io/kubernetes-cluster'] = 'demo';
    // Another team's that the user may not read either: the scan withholds what it claims.
    if (!ownedByUser && random.chance(0.25))
      annotations['pvc-pruner.demo/claims-visible-to'] = 'owners';
    scenario.entities.push({
      name: `${namespace}-e${i}`,
      owner: random.pick(ownedByUser ? USER_OWNERS : OTHER_OWNERS),
      kind,
      ownedByUser,
      annotations,
    });
  }
  const own = scenario.entities.filter(e => e.ownedByUser);
  if (own.length > 0) {
    // The user's entity over-claims another team's StatefulSet, or nobody's.
    const theirs = statefulSets.find(s => s.name === target)!;
    if (random.chance(0.6)) {
      const borrows = own.some(e => e.kind === 'borrowed-id');
      theirs.team = borrows || random.chance(0.7) ? 'search' : 'none';
    }
    // A prune goes through the user's own entity when it claims the StatefulSet.
    for (const r of requests) {
      const { team } = statefulSets.find(s => s.name === r.statefulSet)!;
      const through = own.filter(
        e =>
          e.kind === 'catch-all' ||
          (e.kind === 'borrowed-id' && team === 'search'),
      );
      if (through.length > 0 && (team !== 'checkout' || random.chance(0.4)))
        r.via = `component:default/${random.pick(through).name}`;
    }
  }
  scenario.entitiesBeforeScan =
    requests.some(r => r.via !== USER_ENTITY) || random.chance(0.5);
  scenario.chaos.sort((a, b) => a.atMs - b.atMs);
}

/**
 * A StatefulSet whose claims' names are also the target's: `ledger-<target>`
 * with template `data`, beside the target with a template `data-ledger`, so
 * that `data-ledger-<target>-0` is a claim of both. The plugin keeps such
 * claims (name-also-fits); the user sometimes confirms them anyway, and the
 * oracle judges a deletion by either StatefulSet's state (in use, paused).
 */
function drawLookalike(random: Random, scenario: Scenario, target: string) {
  if (!random.chance(0.1)) return;
  const sts = scenario.statefulSets.find(s => s.name === target)!;
  const name = `ledger-${target}`;
  if (scenario.statefulSets.some(s => s.name === name)) return;
  const replicas = random.int(0, 3);
  sts.templates.push('data-ledger');
  scenario.statefulSets.push({
    name,
    team: 'checkout',
    templates: ['data'],
    start: 0,
    replicas,
    claimOrdinals: Array.from({ length: replicas + 1 }, (_, i) => i),
    podManagementPolicy: 'Parallel',
    retention: { whenScaled: 'Retain', whenDeleted: 'Retain' },
  });
  const ordinals = new Set([
    ...sts.claimOrdinals,
    ...Array.from({ length: replicas + 1 }, (_, i) => i),
  ]);
  for (const ordinal of [...ordinals].sort((a, b) => a - b))
    scenario.claims.push({
      name: claimName('data-ledger', target, ordinal),
      reclaimPolicy: 'Delete',
      foreignFinalizer: false,
    });
  for (const r of scenario.requests)
    if (r.statefulSet === target && !r.extras.includes('kept'))
      r.extras.push('kept');
}

/** While a job runs, the StatefulSet's kubernetes-id label is changed: it becomes another team's, or nobody's. */
function drawRelabel(random: Random, scenario: Scenario, target: string) {
  if (!random.chance(0.08)) return;
  scenario.chaos.push({
    atMs: random.int(0, 1200),
    kind: 'relabel',
    statefulSet: target,
    team: random.chance(0.7) ? 'search' : 'none',
  });
  scenario.chaos.sort((a, b) => a.atMs - b.atMs);
}

/**
 * HorizontalPodAutoscalers: one targeting the StatefulSet (its range keeps
 * claims above the replicas), decoys that target something else, and ones
 * created or raised while a job runs. Paused StatefulSets (replicas 0,
 * drawn above) and autoscaled ones keep claims the scan does not offer; the
 * user sometimes confirms those anyway (an old tab).
 */
function drawAutoscalers(random: Random, scenario: Scenario, target: string) {
  const sts = scenario.statefulSets.find(s => s.name === target)!;
  const reach = () => Math.max(1, sts.replicas + random.int(0, 3));
  if (random.chance(0.3))
    scenario.autoscalers.push({
      name: `${target}-hpa`,
      target: { kind: 'StatefulSet', name: target },
      minReplicas: 1,
      maxReplicas: reach(),
    });
  if (random.chance(0.12))
    scenario.autoscalers.push({
      name: `${target}-web-hpa`,
      target: { kind: 'Deployment', name: target },
      minReplicas: 1,
      maxReplicas: 20,
    });
  if (random.chance(0.3)) {
    const existing = scenario.autoscalers.find(
      a => a.target.kind === 'StatefulSet',
    );
    const atMs = random.int(0, 1200);
    if (existing && random.chance(0.8))
      scenario.chaos.push({
        atMs,
        kind: 'raise-autoscaler',
        autoscaler: existing.name,
        maxReplicas: existing.maxReplicas + random.int(1, 4),
      });
    else
      scenario.chaos.push({
        atMs,
        kind: 'create-autoscaler',
        autoscaler: {
          name: `${target}-hpa-${random.int(1, 9)}`,
          target: { kind: 'StatefulSet', name: target },
          minReplicas: 1,
          maxReplicas: sts.replicas + random.int(1, 4),
        },
      });
    scenario.chaos.sort((a, b) => a.atMs - b.atMs);
  }
  const keeps = (name: string) =>
    scenario.statefulSets.find(s => s.name === name)!.replicas === 0 ||
    scenario.autoscalers.some(
      a => a.target.kind === 'StatefulSet' && a.target.name === name,
    );
  for (const r of scenario.requests)
    if (random.chance(keeps(r.statefulSet) ? 0.6 : 0.1)) r.extras.push('kept');
}

/** The campaign's simulator's timeFactor: 50 simulated seconds (a driver's delay, a grace period) take 1 s. */
export const SIM_TIME_FACTOR = 0.02;

/**
 * The undo window (issue 18): in a good share of scenarios every prune asks
 * for snapshots (the replicas run with `snapshots.required: true` and a
 * short `timeoutSeconds`). Their claims' volumes get the driver's default
 * VolumeSnapshotClass (deletionPolicy Delete), a mapped one (Retain), or
 * none; some orphans' snapshots are slow (some past the timeout) or fail;
 * and someone deletes a snapshot by hand while the job waits for it, or
 * right after it became ready.
 */
function drawSnapshots(random: Random, scenario: Scenario, orphans: string[]) {
  if (!random.chance(0.45)) return;
  for (const r of scenario.requests) r.snapshot = true;
  // Drawn per claim, so that one job meets several classes.
  for (const claim of scenario.claims) {
    if (claim.reclaimPolicy === 'Retain') continue;
    const p = random.next();
    if (p < 0.12) claim.snapshotClass = 'none';
    else if (p < 0.35) claim.snapshotClass = 'mapped-retain';
    else claim.snapshotClass = 'default-delete';
  }
  const deletable = orphans.filter(o =>
    scenario.claims.some(
      c =>
        c.name === o &&
        c.reclaimPolicy === 'Delete' &&
        c.snapshotClass !== 'none',
    ),
  );
  for (const claim of random.some(deletable, 0.3)) {
    const p = random.next();
    if (p < 0.3)
      scenario.snapshotBehaviours.push({
        claim,
        error: random.pick([
          'simulated driver failure: quota exceeded',
          'simulated driver failure: volume busy',
        ]),
      });
    else
      scenario.snapshotBehaviours.push({
        claim,
        // 0.2 s to 6 s; the replicas wait 3 s.
        readyAfterSeconds: random.pick([10, 40, 100, 180, 300]),
      });
  }
  if (deletable.length > 0 && random.chance(0.35)) {
    const count = random.int(1, 2);
    for (let i = 0; i < count; i++)
      scenario.chaos.push({
        atMs: 0,
        kind: 'delete-snapshot',
        claim: random.pick(deletable),
        when: random.chance(0.5) ? 'created' : 'ready',
      });
  }
}

/**
 * Retain volumes that are pruned and then reclaimed: in most scenarios
 * whose prunes may leave a Retain volume Released, the user then reclaims
 * what the card offers (a dry run now and then), with the cluster racing it.
 */
function drawReclaim(random: Random, scenario: Scenario, replicaCount: number) {
  if (!scenario.claims.some(c => c.reclaimPolicy === 'Retain')) return;
  if (!random.chance(0.85)) return;
  // A re-bound volume is the race that matters most: drawn twice as often.
  const kinds = [
    'rebind',
    'rebind',
    'touch',
    'recreate-claim',
    'create-statefulset',
  ] as const;
  scenario.reclaim = {
    replica: random.int(0, replicaCount - 1),
    share: random.chance(0.7) ? 1 : 0.5,
    dryRun: random.chance(0.25),
    races: Array.from({ length: random.int(1, 2) }, () => ({
      atMs: random.int(0, 400),
      kind: random.pick(kinds),
    })).sort((a, b) => a.atMs - b.atMs),
  };
}
