/**
 * Runs one scenario against the simulator and the replicas, and collects
 * what the oracle judges: the simulator's history, the cluster's final state,
 * what the campaign sent, and what the replicas say about the jobs.
 */
import {
  ClaimDeletion,
  historyNow,
  KubeObject,
  KubeSim,
  LeaseWrite,
  ReclaimPolicyChange,
  RecordedRequest,
  SnapshotRecord,
  VolumeDeletion,
} from 'kube-sim';
import {
  AUTO_PRUNE_ANNOTATION,
  parseDuration,
  PruneEvent,
  PruneJob,
} from 'backstage-plugin-pvc-pruner-common';
import {
  BackendClient,
  LeftBehindGroupView,
  PostOutcome,
} from './backendClient';
import {
  applyKeep,
  AutoPruneRecords,
  AWAITED_WAIT_MS,
  emptyAutoPruneRecords,
  untilDeleted,
} from './autoPrunePhase';
import { AUTO_PRUNE_SETTINGS, optedInGraceMs } from './autoPruneScenario';
import { CampaignCatalog, catalogEntityOf } from './campaignCatalog';
import {
  chaos,
  cleanUp,
  deleteBeforeScan,
  seedCluster,
  settle,
} from './cluster';
import { CatalogEntity } from './ownership';
import { RECLAIM_AUDIT_EVENT } from './reclaimOracle';
import { ReclaimRecord, runReclaim } from './reclaimPhase';
import { pollJob, usable } from './polling';
import { applyProcessFault, AuditEvent, Replica } from './replicas';
import {
  ExtraConfirmation,
  ProcessFault,
  PruneRequestPlan,
  Scenario,
  SIM_TIME_FACTOR,
  StatefulSetPlan,
  USER_ENTITY,
} from './scenario';

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/**
 * How long the plugin uses a catalog read for scans and requests before the
 * next request starts a new one (WorkloadCatalog's maxAgeMs): the request
 * that starts it still gets the old read.
 */
const WARM_CATALOG_MS = 10_000;

export interface Confirmation {
  name: string;
  uid: string;
}

export interface SentPrune {
  plan: PruneRequestPlan;
  replica: number;
  sentAt: number;
  answeredAt?: number;
  confirmed: Confirmation[];
  outcome: PostOutcome;
}

export interface JobRecord {
  id: string;
  replica: number;
  sentAt: number;
  statefulSet: string;
  /** The entity the prune went through. */
  via: string;
  dryRun: boolean;
  /** The campaign asked for snapshots (`snapshot: true`): from its own request, not the plugin's answer. */
  snapshot: boolean;
  /** A prune of the claims a deleted StatefulSet left behind (`leftBy`). */
  leftBehind: boolean;
  confirmed: Confirmation[];
  /** The job as the last replica asked answered, once terminal. */
  final?: PruneJob;
  /** When the campaign first saw it terminal. */
  endedAt?: number;
  /** Its event log as each replica serves it (an Error when it could not be read). */
  eventsByReplica: Map<number, PruneEvent[] | Error>;
  /** Its replica was killed while it ran. */
  replicaKilled: boolean;
}

export interface ScenarioRun {
  scenario: Scenario;
  requests: RecordedRequest[];
  deletions: ClaimDeletion[];
  leaseWrites: LeaseWrite[];
  /** Each VolumeSnapshot's life in the namespace, as the simulator recorded it. */
  snapshotEvents: SnapshotRecord[];
  /** Every change of a volume's reclaim policy during the scenario (volumes have no namespace), as the simulator recorded it. */
  policyChanges: ReclaimPolicyChange[];
  /** Every volume deletion during the scenario, as the simulator recorded it. */
  volumeDeletions: VolumeDeletion[];
  /** The reclaims the campaign sent once the prunes had ended. */
  reclaims: ReclaimRecord[];
  sent: SentPrune[];
  jobs: JobRecord[];
  finalClaims: KubeObject[];
  audit: AuditEvent[];
  /** Simulator user → replica index. */
  replicaOfUser: Map<string, number>;
  /** The catalog's entities with Kubernetes annotations: the demo's, and the scenario's with when every replica served them. */
  catalog: CatalogEntity[];
  /** The user's ownership refs, as its sign-in gave them: what the demo's policy judges by. */
  ownershipRefs: string[];
  /** `pvcPruner.pausedStatefulSets` as the replicas run. */
  pausedStatefulSets: 'keep' | 'offer';
  faults: Record<string, number>;
  /** The harness itself failed (a replica did not restart, …): the scenario is not judged as passed. */
  harnessErrors: string[];
  /** How long each change of the catalog took to be served by every replica, ms. */
  catalogSyncsMs: number[];
  /** When a replica was stopped with SIGSTOP and resumed (historyNow()). */
  freezes: Array<{ replica: number; from: number; to: number }>;
  /**
   * The replicas ran automatic pruning (`pvcPruner.autoPrune`, with this
   * minimumGrace): a deletion no prune of the campaign confirmed is judged
   * as automatic; without it, it is unconfirmed.
   */
  autoPrune?: { minimumGraceMs: number };
  /** The owner's keeps and the process faults of the automatic side, as the campaign logged them. */
  autoPruneRecords: AutoPruneRecords;
  durationMs: number;
}

function randomUid(seed: number) {
  const hex = seed.toString(16).padStart(8, '0');
  return `${hex}-dead-4bad-8bad-${hex}cafe`;
}

/** The kept claims a careless user confirms anyway: they will come back, or are another StatefulSet's too. */
const KEPT_TO_CONFIRM: string[] = [
  'paused',
  'autoscaler-range',
  'name-also-fits',
];

/** What a scan showed of one StatefulSet: the orphans it offered, and the claims it kept that the user may confirm anyway. */
interface Scanned {
  offered: Confirmation[];
  kept: Confirmation[];
  /** Of a deleted StatefulSet's left-behind claims: what they are traced by. */
  leftBehind?: LeftBehindGroupView;
}

/** What the user confirms for one request: offered orphans of the scan, plus the plan's careless extras. */
function confirmationsFor(
  sim: KubeSim,
  scenario: Scenario,
  plan: PruneRequestPlan,
  { offered, kept }: Scanned,
): Confirmation[] {
  const ns = scenario.namespace;
  const take = Math.max(1, Math.round(offered.length * plan.share));
  const chosen = offered.slice(0, take);
  const claims = sim.store.list('persistentvolumeclaims', {
    namespace: ns,
  }).items;
  const sts = scenario.statefulSets.find(s => s.name === plan.statefulSet)!;
  const live = (name?: string) => {
    const claim = claims.find(c => c.metadata.name === name);
    return claim
      ? { name: claim.metadata.name, uid: claim.metadata.uid }
      : undefined;
  };
  const extra = (kind: ExtraConfirmation): Confirmation | undefined => {
    switch (kind) {
      case 'in-use':
        return live(
          sts.replicas > 0
            ? `${sts.templates[0]}-${sts.name}-${sts.start}`
            : undefined,
        );
      case 'mounted':
        return live(scenario.pods[0]?.claim);
      case 'non-canonical':
        return live(
          scenario.claims.find(
            c =>
              c.name.startsWith(`${sts.templates[0]}-${sts.name}-`) &&
              !/-(0|[1-9][0-9]*)$/.test(c.name),
          )?.name,
        );
      case 'stale-uid':
        return (
          offered[0] && { name: offered[0].name, uid: randomUid(scenario.seed) }
        );
      case 'sibling':
        return live(
          claims.find(
            c =>
              sts.templates.some(t =>
                c.metadata.name.startsWith(`${t}-${sts.name}-`),
              ) &&
              scenario.statefulSets.some(
                other =>
                  other.name !== sts.name &&
                  other.name.startsWith(`${sts.name}-`) &&
                  other.templates.some(t =>
                    c.metadata.name.startsWith(`${t}-${other.name}-`),
                  ),
              ),
          )?.metadata.name,
        );
      default:
        return undefined;
    }
  };
  for (const kind of plan.extras) {
    for (const add of kind === 'kept' ? kept : [extra(kind)])
      if (add && !chosen.some(c => c.name === add.name)) chosen.push(add);
  }
  return chosen;
}

export interface RunContext {
  sim: KubeSim;
  replicas: Replica[];
  clients: BackendClient[];
  catalog: CampaignCatalog;
  /** The demo's entities with Kubernetes annotations, as the catalog served them at the start. */
  baseCatalog: CatalogEntity[];
  ownershipRefs: string[];
  /** The replicas run `pvcPruner.autoPrune` (src/autoPruneScenario.ts). */
  autoPrune: boolean;
  /** Set when the replicas' warm catalog reads may still hold entities of an earlier scenario that claim in any namespace. */
  warmCatalogOlderThan?: number;
  log: (line: string) => void;
}

/** What the scenario draws beyond faults, counted for the report. */
function countDraws(scenario: Scenario, count: (kind: string) => void) {
  for (const e of scenario.entities)
    count(
      `catalog: ${e.kind} entity, ${
        e.ownedByUser ? "the user's own" : "another team's"
      }`,
    );
  const paused = (s: StatefulSetPlan) => s.replicas === 0;
  for (const s of scenario.statefulSets) {
    if (paused(s)) count('cluster: paused StatefulSet');
    if (s.team !== 'checkout') count(`cluster: StatefulSet of team ${s.team}`);
  }
  for (const a of scenario.autoscalers)
    count(
      a.target.kind === 'StatefulSet'
        ? 'cluster: HPA of a StatefulSet'
        : 'cluster: HPA of a Deployment (decoy)',
    );
  for (const r of scenario.requests)
    if (r.extras.includes('kept')) count('user: confirms kept claims');
  if (scenario.requests.some(r => r.snapshot)) {
    count('snapshots: prunes ask for snapshots');
    for (const c of scenario.claims)
      if (c.reclaimPolicy === 'Delete')
        count(
          `snapshots: claim of class ${c.snapshotClass ?? 'default-delete'}`,
        );
  }
  for (const b of scenario.snapshotBehaviours)
    count(
      b.error
        ? 'snapshots: failing snapshot'
        : `snapshots: slow snapshot (${(
            (b.readyAfterSeconds ?? 0) * SIM_TIME_FACTOR
          ).toFixed(1)} s)`,
    );
  if (scenario.statefulSets.some(s => s.templates.includes('data-ledger')))
    count("cluster: a StatefulSet whose claims' names fit another's");
  if (scenario.autoPrune) {
    const auto = scenario.autoPrune;
    count(
      `auto-prune: entity opted in${
        optedInGraceMs({ [AUTO_PRUNE_ANNOTATION]: auto.annotation })
          ? ''
          : ` with an invalid annotation ("${auto.annotation}")`
      }`,
    );
    if (auto.secondClaimant)
      count(
        `auto-prune: a second claimant, ${
          auto.secondClaimant.annotation ? 'opted in too' : 'not opted in'
        }`,
      );
  }
  for (const s of scenario.statefulSets)
    if (s.deletedBeforeScan)
      count('cluster: StatefulSet deleted before the scan, claims left');
  for (const c of scenario.chaos)
    if (
      c.kind === 'recreate-statefulset' &&
      (c.replicas ?? c.absentMs) !== undefined
    )
      count(
        `chaos: recreate-statefulset${
          c.replicas !== undefined ? ', more replicas' : ''
        }${c.absentMs !== undefined ? ', gone a while' : ''}`,
      );
}

export async function runScenario(
  ctx: RunContext,
  scenario: Scenario,
): Promise<ScenarioRun> {
  const { sim, replicas, clients } = ctx;
  const history = sim.history!;
  history.clear();
  const started = historyNow();
  const harnessErrors: string[] = [];
  const faults: Record<string, number> = {};
  const count = (kind: string) => {
    faults[kind] = (faults[kind] ?? 0) + 1;
  };
  const ns = scenario.namespace;
  countDraws(scenario, count);
  await seedCluster(sim, scenario);
  // The user looked at the card while the StatefulSets deleted before the
  // scan still existed: the scan records their claims' lineage.
  if (scenario.statefulSets.some(s => s.deletedBeforeScan && s.lineage))
    await clients[0]
      .orphans(USER_ENTITY)
      .catch(e => harnessErrors.push(`look before deletion: ${e.message}`));
  await deleteBeforeScan(sim, scenario);
  // The driver's answers for this scenario's slow and failing snapshots.
  for (const b of scenario.snapshotBehaviours)
    sim.addSnapshotBehaviour({
      namespace: ns,
      claim: b.claim,
      readyAfterSeconds: b.readyAfterSeconds,
      error: b.error,
    });
  const unsubscribes: Array<() => void> = [];

  // The scenario's entities, registered before the user scans or between the scan and the prunes.
  const catalog: CatalogEntity[] = [...ctx.baseCatalog];
  const catalogSyncsMs: number[] = [];
  const syncCatalog = async (entities: Scenario['entities']) => {
    if (entities.length === 0 && !ctx.catalog.holdsAny) return historyNow();
    const from = historyNow();
    const visibleAt = await ctx.catalog.apply(entities);
    catalogSyncsMs.push(visibleAt - from);
    return visibleAt;
  };
  const register = async () => {
    const writtenAt = historyNow();
    const visibleAt = await syncCatalog(scenario.entities);
    catalog.push(
      ...scenario.entities.map(e => catalogEntityOf(e, visibleAt, writtenAt)),
    );
  };
  if (scenario.entitiesBeforeScan) await register();
  if (ctx.warmCatalogOlderThan !== undefined)
    await outwaitWarmCatalog(ctx, ctx.warmCatalogOlderThan, [
      ...new Set(scenario.requests.map(r => r.via)),
    ]);

  // The user scans, as the card does, and confirms from what it offers.
  const scans = new Map<string, Scanned>();
  const scanKey = (plan: PruneRequestPlan) => `${plan.via} ${plan.statefulSet}`;
  for (const plan of scenario.requests) {
    if (scans.has(scanKey(plan))) continue;
    if (plan.leftBehind) {
      const group = (await clients[plan.replica].leftBehind(plan.via)).find(
        g => g.namespace === ns && g.statefulSet.name === plan.statefulSet,
      );
      count(
        group
          ? `left behind: offered, by ${group.evidence}`
          : 'left behind: not offered',
      );
      scans.set(scanKey(plan), {
        offered: (group?.report.orphans ?? []).map(o => ({
          name: o.name,
          uid: o.uid,
        })),
        kept: [],
        leftBehind: group,
      });
      continue;
    }
    const scan = await clients[plan.replica].orphans(plan.via);
    const cluster = scan.clusters.find(c => c.ok);
    const sts =
      cluster && cluster.ok
        ? cluster.statefulSets.find(
            s => s.namespace === ns && s.name === plan.statefulSet,
          )
        : undefined;
    scans.set(scanKey(plan), {
      offered: (sts?.orphans ?? []).map(o => ({ name: o.name, uid: o.uid })),
      kept: (sts?.kept ?? [])
        .filter(k => KEPT_TO_CONFIRM.includes(k.reason))
        .map(k => ({ name: k.name, uid: k.uid })),
    });
  }
  if (!scenario.entitiesBeforeScan) await register();
  // The owner of the opted-in entity looks at its card on every replica:
  // the scans record its orphans' first sightings (the grace runs from
  // them) and start fresh catalog reads that hold the entity.
  if (scenario.autoPrune) {
    const ref = `component:default/${scenario.autoPrune.entity}`;
    await Promise.all(
      clients.map(c =>
        c
          .orphans(ref)
          .then(() => count('auto-prune: owner looked at the card'))
          .catch(() => count('auto-prune: the card could not be read')),
      ),
    );
  }

  const sent: SentPrune[] = [];
  const tasks: Array<Promise<unknown>> = [];
  const t0 = historyNow();
  const at = (ms: number, what: string, fn: () => unknown) => {
    tasks.push(
      sleep(Math.max(0, t0 + ms - historyNow()))
        .then(fn)
        .catch(e => harnessErrors.push(`${what}: ${(e as Error).message}`)),
    );
  };

  for (const plan of scenario.requests) {
    const scanned = scans.get(scanKey(plan)) ?? { offered: [], kept: [] };
    const confirmed = confirmationsFor(sim, scenario, plan, scanned);
    if (confirmed.length === 0) continue;
    const group = scanned.leftBehind;
    const leftBy = group && {
      evidence: group.evidence,
      ...(group.statefulSet.uid
        ? { statefulSetUid: group.statefulSet.uid }
        : {}),
      ...(group.evidence === 'name-and-labels' && plan.leftBehind?.typesNames
        ? { typedNames: confirmed.map(c => c.name) }
        : {}),
    };
    at(plan.atMs, 'prune request', async () => {
      const record: SentPrune = {
        plan,
        replica: plan.replica,
        sentAt: historyNow(),
        confirmed,
        outcome: { kind: 'unknown', message: 'not answered yet' },
      };
      sent.push(record);
      if (leftBy)
        count(
          `left behind: prune sent (${leftBy.evidence}${
            'typedNames' in leftBy ? ', names typed' : ''
          })`,
        );
      record.outcome = await clients[plan.replica].prune({
        entityRef: plan.via,
        namespace: ns,
        statefulSet: plan.statefulSet,
        pvcs: confirmed,
        dryRun: plan.dryRun,
        ...(plan.snapshot ? { snapshot: true } : {}),
        ...(leftBy ? { leftBy } : {}),
      });
      record.answeredAt = historyNow();
    });
  }

  for (const [n, event] of scenario.chaos.entries()) {
    at(event.atMs, `chaos ${event.kind}`, async () => {
      count(`chaos: ${event.kind}`);
      if (event.kind === 'scale')
        chaos.scale(sim, ns, event.statefulSet, event.replicas);
      else if (event.kind === 'set-start')
        chaos.setStart(sim, ns, event.statefulSet, event.start);
      else if (event.kind === 'recreate-statefulset')
        await chaos.recreateStatefulSet(
          sim,
          scenario,
          event.statefulSet,
          event,
        );
      else if (event.kind === 'create-statefulset')
        chaos.createStatefulSet(
          sim,
          scenario,
          event.statefulSet,
          event.replicas,
        );
      else if (event.kind === 'recreate-orphan')
        await chaos.recreateClaim(sim, scenario, event.claim);
      else if (event.kind === 'mount-orphan')
        chaos.mount(sim, ns, event.claim, `intruder-${n}`);
      else if (event.kind === 'create-autoscaler')
        chaos.createAutoscaler(sim, ns, event.autoscaler);
      else if (event.kind === 'raise-autoscaler')
        chaos.raiseAutoscaler(sim, ns, event.autoscaler, event.maxReplicas);
      else if (event.kind === 'relabel')
        chaos.relabel(sim, ns, event.statefulSet, event.team);
      else if (event.kind === 'delete-snapshot')
        unsubscribes.push(
          chaos.deleteSnapshotWhen(sim, ns, event.claim, event.when, () =>
            count(`chaos: snapshot deleted by hand when ${event.when}`),
          ),
        );
    });
  }

  for (const fault of scenario.apiFaults) {
    at(fault.atMs, `fault ${fault.kind}`, async () => {
      count(`api: ${fault.kind}`);
      if (fault.kind === 'dropped-watches') {
        sim.dropWatches();
        return;
      }
      if (fault.kind === 'compaction') {
        // Forget the history, then end the watches: a re-watch from where it was gets "too old".
        sim.compact();
        sim.dropWatches();
        return;
      }
      const id = sim.addFault({
        verb: fault.verb,
        resource: fault.resource,
        ...(fault.kind === 'latency'
          ? { latencyMs: fault.latencyMs }
          : {
              status: fault.kind === '429' ? 429 : fault.status,
              rate: fault.rate,
              retryAfterSeconds: fault.retryAfterSeconds,
            }),
      });
      await sleep(fault.durationMs);
      sim.faults.remove(id);
    });
  }

  // Process faults: on the replica running the first job; and, while
  // automatic runs go on, on a drawn replica (not that one: its restart
  // must not be cut short). Restarting takes tens of seconds on a busy
  // machine: the jobs are followed meanwhile.
  const freezes: ScenarioRun['freezes'] = [];
  const kills: Array<{ replica: number; at: number }> = [];
  const restarts: Array<Promise<void>> = [];
  const processFault = (replica: Replica, fault: ProcessFault, during = '') =>
    at(fault.atMs, `${fault.kind}${during}`, async () => {
      const { restarting } = await applyProcessFault(
        replica,
        fault,
        { kills, freezes },
        kind => count(`${kind}${during}`),
      );
      if (restarting)
        restarts.push(
          restarting.catch(e => {
            harnessErrors.push(`restart: ${e.message}`);
          }),
        );
    });
  const target = replicas[scenario.requests[0].replica];
  if (scenario.processFault) processFault(target, scenario.processFault);
  const auto = scenario.autoPrune;
  for (const fault of auto?.processFaults ?? [])
    if (!scenario.processFault || fault.replica !== target.index)
      processFault(replicas[fault.replica], fault, ' during automatic runs');

  // Automatic pruning: the owner's keeps, and the window the runs get.
  const autoPruneRecords = emptyAutoPruneRecords();
  for (const keep of auto?.keeps ?? [])
    at(keep.atMs, `keep ${keep.kind}`, () =>
      applyKeep(sim, clients, scenario, keep, autoPruneRecords, count),
    );
  // It waits for the awaited orphans beside the jobs' polls, which have their own bound.
  let windowClosed = Promise.resolve();
  if (auto)
    at(auto.windowMs, 'automatic runs', () => {
      windowClosed = (
        ctx.autoPrune
          ? untilDeleted(sim, ns, auto.awaited, AWAITED_WAIT_MS)
          : Promise.resolve()
      ).then(() => {
        autoPruneRecords.windowClosedAt = historyNow();
      });
    });

  // Every answered or unanswered request is known once its task ends; restart and freeze run on.
  await Promise.all(tasks);
  const jobs: JobRecord[] = [];
  for (const s of sent) {
    if (s.outcome.kind === 'accepted')
      jobs.push({
        id: s.outcome.jobId,
        replica: s.replica,
        sentAt: s.sentAt,
        statefulSet: s.plan.statefulSet,
        via: s.plan.via,
        dryRun: s.plan.dryRun,
        snapshot: s.plan.snapshot,
        leftBehind: Boolean(s.plan.leftBehind),
        confirmed: s.confirmed,
        eventsByReplica: new Map(),
        replicaKilled: false,
      });
  }
  // A request whose answer was lost may still have started a job: find it in the history.
  if (sent.some(s => s.outcome.kind === 'unknown')) {
    const live = usable(ctx);
    const known = new Set(jobs.map(j => j.id));
    const listed: PruneJob[] = [];
    for (const via of new Set(sent.map(s => s.plan.via)))
      if (live.length)
        listed.push(
          ...(await clients[live[0]]
            .history(via)
            .catch(() => [] as PruneJob[])),
        );
    for (const s of sent.filter(x => x.outcome.kind === 'unknown')) {
      const match = listed.find(
        j =>
          !known.has(j.id) &&
          j.namespace === ns &&
          j.statefulSet === s.plan.statefulSet &&
          JSON.stringify(j.pvcs) === JSON.stringify(s.confirmed),
      );
      if (match) {
        known.add(match.id);
        jobs.push({
          id: match.id,
          replica: s.replica,
          sentAt: s.sentAt,
          statefulSet: s.plan.statefulSet,
          via: s.plan.via,
          dryRun: s.plan.dryRun,
          snapshot: s.plan.snapshot,
          leftBehind: Boolean(s.plan.leftBehind),
          confirmed: s.confirmed,
          eventsByReplica: new Map(),
          replicaKilled: false,
        });
      }
    }
  }
  await Promise.all(jobs.map(job => pollJob(ctx, job)));
  await windowClosed;
  for (const job of jobs)
    job.replicaKilled = kills.some(
      k =>
        job.replica === k.replica &&
        job.sentAt <= k.at &&
        (job.final?.finishedAt === undefined ||
          Date.parse(job.final.finishedAt) >= k.at - 50),
    );

  // Everything back up, and the cluster settled, before the final state is read.
  await Promise.all(restarts);
  for (const r of replicas) {
    r.thaw();
    if (!r.alive)
      await r.start().catch(e => harnessErrors.push(`start: ${e.message}`));
  }
  await sleep(300);
  await settle(sim, 5000);

  // The prunes have ended: the user reclaims what they left Released.
  const reclaims = await runReclaim(ctx, scenario, count).catch(e => {
    harnessErrors.push(`reclaim: ${(e as Error).message}`);
    return [] as ReclaimRecord[];
  });
  if (reclaims.length > 0) await settle(sim, 5000);

  for (const job of jobs) {
    for (const r of replicas) {
      job.eventsByReplica.set(
        r.index,
        await clients[r.index]
          .events(job.id)
          .catch(e => (e instanceof Error ? e : new Error(String(e)))),
      );
    }
  }
  const finalClaims = sim.store
    .list('persistentvolumeclaims', { namespace: ns })
    .items.map(c => structuredClone(c));
  const audit = replicas
    .flatMap(r => r.auditEvents())
    .filter(
      a =>
        (a.eventId === 'prune' || a.eventId === RECLAIM_AUDIT_EVENT) &&
        a.meta?.namespace === ns,
    );
  const inScenario = (r: { namespace?: string }) =>
    r.namespace === ns || r.namespace === undefined;
  const run: ScenarioRun = {
    scenario,
    requests: history.requests().filter(inScenario),
    deletions: history.claimDeletions().filter(d => d.request.namespace === ns),
    leaseWrites: history.leaseWrites().filter(w => w.request.namespace === ns),
    snapshotEvents: history.snapshotEvents().filter(e => e.namespace === ns),
    policyChanges: history.reclaimPolicyChanges(),
    volumeDeletions: history.volumeDeletions(),
    reclaims,
    sent,
    jobs,
    finalClaims,
    audit,
    replicaOfUser: new Map(replicas.map(r => [r.kubeUser, r.index])),
    catalog,
    ownershipRefs: ctx.ownershipRefs,
    pausedStatefulSets: 'keep',
    faults,
    harnessErrors,
    catalogSyncsMs,
    freezes,
    ...(ctx.autoPrune
      ? {
          autoPrune: {
            minimumGraceMs: parseDuration(AUTO_PRUNE_SETTINGS.minimumGrace)!,
          },
        }
      : {}),
    autoPruneRecords,
    durationMs: historyNow() - started,
  };
  sim.clearFaults();
  sim.clearSnapshotBehaviours();
  for (const unsubscribe of unsubscribes) unsubscribe();
  cleanUp(sim, scenario);
  // The scenario's entities leave the catalog before the next scenario begins.
  const removedAt = historyNow();
  for (const e of catalog) if (e.visibleAt > 0) e.removedAt = removedAt;
  await syncCatalog([]).catch(e =>
    harnessErrors.push(`catalog clean-up: ${e.message}`),
  );
  // An entity of no namespace claims in the next scenario's namespace too,
  // and the plugin's warm catalog read keeps it a while after it left the
  // catalog (where the policy, unable to find it, denies reading it): the
  // next scenario outwaits that.
  if (
    scenario.entities.some(
      e => !e.annotations['backstage.io/kubernetes-namespace'],
    )
  )
    ctx.warmCatalogOlderThan = historyNow();
  run.durationMs = historyNow() - started;
  return run;
}

/**
 * Until no replica's warm catalog read is older than `since`: its age runs
 * out, then a scan through each entity the scenario's prunes go through
 * starts a new one on each replica (a scan that finds a StatefulSet: with
 * none it asks nothing of the catalog).
 */
async function outwaitWarmCatalog(
  ctx: RunContext,
  since: number,
  through: string[],
) {
  await sleep(Math.max(0, since + WARM_CATALOG_MS + 250 - historyNow()));
  await Promise.all(
    ctx.clients.flatMap(c =>
      through.map(via => c.orphans(via).catch(() => undefined)),
    ),
  );
  await sleep(1000);
  ctx.warmCatalogOlderThan = undefined;
}

/** A scenario the harness could not run to the end: judged as failed, with the reason. */
export function failedRun(scenario: Scenario, error: Error): ScenarioRun {
  return {
    scenario,
    requests: [],
    deletions: [],
    leaseWrites: [],
    snapshotEvents: [],
    policyChanges: [],
    volumeDeletions: [],
    reclaims: [],
    sent: [],
    jobs: [],
    finalClaims: [],
    audit: [],
    replicaOfUser: new Map(),
    catalog: [],
    ownershipRefs: [],
    pausedStatefulSets: 'keep',
    faults: {},
    harnessErrors: [`the scenario could not run: ${error.message}`],
    catalogSyncsMs: [],
    freezes: [],
    autoPruneRecords: emptyAutoPruneRecords(),
    durationMs: 0,
  };
}
