/**
 * The reclaim phase of a scenario: once its prunes have ended, the user
 * reclaims the Released volumes the card offers for the namespace
 * (`GET /v1/released-volumes`, then `POST /v1/reclaim-jobs`), while the
 * cluster races it, and the campaign follows the job to its end.
 */
import { historyNow, KubeSim } from 'kube-sim';
import type { PruneJob } from 'backstage-plugin-pvc-pruner-common';
import {
  PostOutcome,
  ReclaimVolumeRef,
  ReleasedVolumeView,
} from './backendClient';
import { chaos } from './cluster';
import { pollJob } from './polling';
import type { RunContext } from './runScenario';
import { ReclaimPlan, Scenario, USER_ENTITY } from './scenario';

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** When the request goes out, after the listing: races drawn before it land between the listing and the request. */
const SEND_AT_MS = 150;
/** How often the list is read while it shows no volume of the namespace though the cluster has one Released. */
const LIST_ATTEMPTS = 3;

export interface ReclaimRecord {
  replica: number;
  sentAt: number;
  dryRun: boolean;
  /** The volumes the user confirmed, as the listing showed them. */
  volumes: ReclaimVolumeRef[];
  outcome: PostOutcome;
  /** With an accepted request: its job. */
  id?: string;
  final?: PruneJob;
  endedAt?: number;
}

/** Starts one race against the reclaim; says what it did, for the report. */
function race(
  sim: KubeSim,
  scenario: Scenario,
  kind: ReclaimPlan['races'][number]['kind'],
  volumes: ReclaimVolumeRef[],
  claimOf: (volume: string) => string | undefined,
  n: number,
): string | undefined {
  const ns = scenario.namespace;
  const first = volumes[0];
  if (kind === 'rebind')
    return chaos.rebindVolume(sim, ns, first.name, `rebound-${n}`)
      ? 'a confirmed volume re-bound to a new claim'
      : undefined;
  if (kind === 'touch') {
    chaos.touchVolume(sim, volumes[volumes.length - 1].name);
    return 'a confirmed volume changed';
  }
  if (kind === 'recreate-claim') {
    const claim = claimOf(first.name);
    if (!claim) return undefined;
    chaos.recreateReleasedClaim(sim, scenario, claim);
    return "a claim created again under a released one's name";
  }
  const deleted = scenario.statefulSets.find(
    s => s.deletedBeforeScan && !sim.store.get('apps/statefulsets', ns, s.name),
  );
  if (!deleted) return undefined;
  chaos.createStatefulSet(sim, scenario, deleted.name, deleted.replicas + 1);
  return 'a deleted StatefulSet created again';
}

/** Runs the scenario's reclaim, if it has one and the card offers a volume of its namespace. */
export async function runReclaim(
  ctx: RunContext,
  scenario: Scenario,
  count: (kind: string) => void,
): Promise<ReclaimRecord[]> {
  const plan = scenario.reclaim;
  if (!plan) return [];
  const ns = scenario.namespace;
  const client = ctx.clients[plan.replica];
  // As the card does: the list comes from a watch cache that may not have
  // seen the pruned claims' volumes Released yet, so it is read again.
  const releasedInCluster = ctx.sim.store
    .list('persistentvolumes')
    .items.some(
      pv =>
        pv.spec?.claimRef?.namespace === ns && pv.status?.phase === 'Released',
    );
  let listed: ReleasedVolumeView[] = [];
  const attempts = releasedInCluster ? LIST_ATTEMPTS : 1;
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await sleep(1000);
    listed = (await client.releasedVolumes(USER_ENTITY)).filter(
      v => v.claim.namespace === ns,
    );
    if (listed.length > 0) break;
  }
  const offered = listed.filter(v => v.canReclaim);
  if (offered.length === 0) {
    count(
      listed.length > 0
        ? 'reclaim: Released volumes listed, none offered'
        : 'reclaim: no Released volume listed',
    );
    return [];
  }
  const chosen = offered
    .slice(0, Math.max(1, Math.round(offered.length * plan.share)))
    .map(v => ({
      name: v.name,
      uid: v.uid,
      resourceVersion: v.resourceVersion,
      claimUid: v.claim.uid,
    }));
  const claimOf = (volume: string) =>
    offered.find(v => v.name === volume)?.claim.name;
  count(plan.dryRun ? 'reclaim: dry run sent' : 'reclaim: sent');
  const t0 = historyNow();
  const races = plan.races.map(async (r, n) => {
    await sleep(Math.max(0, t0 + r.atMs - historyNow()));
    const did = race(ctx.sim, scenario, r.kind, chosen, claimOf, n);
    if (did)
      count(
        `reclaim race: ${did}${
          r.atMs < SEND_AT_MS ? ' (before the request)' : ''
        }`,
      );
  });
  await sleep(Math.max(0, t0 + SEND_AT_MS - historyNow()));
  const record: ReclaimRecord = {
    replica: plan.replica,
    sentAt: historyNow(),
    dryRun: plan.dryRun,
    volumes: chosen,
    outcome: { kind: 'unknown', message: 'not answered yet' },
  };
  record.outcome = await client.reclaim({
    entityRef: USER_ENTITY,
    namespace: ns,
    volumes: chosen,
    dryRun: plan.dryRun,
  });
  await Promise.all(races);
  if (record.outcome.kind === 'accepted') {
    record.id = record.outcome.jobId;
    await pollJob(ctx, record as ReclaimRecord & { id: string });
    count(`reclaim: job ${record.final?.status ?? 'not ended'}`);
  } else if (record.outcome.kind === 'refused')
    count(`reclaim: refused ${record.outcome.status}`);
  return [record];
}
