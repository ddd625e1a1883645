import type {
  V1PersistentVolumeClaim,
  V1Pod,
  V1StatefulSet,
} from '@kubernetes/client-node';
import {
  describeInUse,
  describeKept,
  PvcOutcome,
} from 'backstage-plugin-pvc-pruner-common';
import type { KubeGateway } from '../kubernetes';
import { mapLimited } from '../mapLimited';
import {
  classifyClaims,
  PausedStatefulSets,
  podAsTheRuleReadsIt,
  ScaleUpSignals,
} from '../orphans';
import type { JobGuards } from './JobGuards';
import type { LastCheck } from './BeforeDeleteStep';

/** A claim the user confirmed, with the ordinal its name has in the StatefulSet. */
export type Confirmed = { name: string; uid: string; ordinal: number };

/** What the live check found of one claim. */
export type Rechecked =
  | {
      kind: 'orphan';
      confirmed: Confirmed;
      /** The version read: the delete's precondition. */
      resourceVersion: string;
      outcome: PvcOutcome;
    }
  | { kind: 'skip' | 'fail'; confirmed: Confirmed; reason: string }
  /** A step's last check refused it (its snapshot is gone, …): not deleted, and the job is incomplete. */
  | { kind: 'held'; confirmed: Confirmed; reason: string };

/** Claims (and their volumes) read at once. */
const READ_CONCURRENCY = 16;

/**
 * The live check right before deleting claims: each claim is read (it is
 * the one confirmed, by uid) with its volume's reclaim policy, then the
 * namespace's pods are listed once for all of them, in the same round trip
 * as the guards' live reads (the StatefulSet, …), and the orphan rule is
 * applied to each against what was just read. Nothing about a claim is read
 * after the pod list: the delete may follow at once.
 */
type ClaimRead =
  | { claim: V1PersistentVolumeClaim; reclaimPolicy?: string }
  | { kind: 'skip' | 'fail'; reason: string };

export async function recheckClaims(
  namespace: string,
  gateway: KubeGateway,
  guards: JobGuards,
  claims: readonly Confirmed[],
  pausedStatefulSets: PausedStatefulSets,
  /** The steps' last checks of each claim, by name, asked with the pods. */
  lastChecks: ReadonlyMap<string, LastCheck[]> = new Map(),
): Promise<Rechecked[]> {
  const reads = await mapLimited(
    claims,
    READ_CONCURRENCY,
    async (confirmed): Promise<ClaimRead> => {
      try {
        const claim = await gateway.readClaim(namespace, confirmed.name);
        if (!claim) return { kind: 'skip', reason: 'it no longer exists' };
        if (claim.metadata?.uid !== confirmed.uid)
          return {
            kind: 'skip',
            reason:
              'it was deleted and recreated since you confirmed it (uid changed)',
          };
        const volumeName = claim.spec?.volumeName;
        const reclaimPolicy = volumeName
          ? (await gateway.readVolume(volumeName).catch(() => undefined))?.spec
              ?.persistentVolumeReclaimPolicy
          : undefined;
        return { claim, reclaimPolicy };
      } catch (e) {
        return { kind: 'fail', reason: (e as Error).message };
      }
    },
  );
  let pods: V1Pod[] = [];
  let neighbours: V1StatefulSet[] = [];
  let held: Array<string | undefined> = [];
  if (reads.some(r => 'claim' in r)) {
    try {
      const steps = Promise.all(
        claims.map((c, i) =>
          'claim' in reads[i]
            ? firstReason(lastChecks.get(c.name), reads[i].claim)
            : undefined,
        ),
      );
      // The pods and the guards' reads last, together: the in-use check is the read closest to the delete.
      [pods, neighbours] = await Promise.all([
        gateway.listPods(namespace, podAsTheRuleReadsIt),
        // Every StatefulSet of the namespace: a claim whose name fits another is kept.
        gateway.listStatefulSets('', namespace),
        guards.confirmLive(gateway),
        steps.then(reasons => {
          held = reasons;
        }),
      ]);
    } catch (e) {
      const reason = (e as Error).message;
      return claims.map((confirmed, i) => {
        const r = reads[i];
        return 'claim' in r
          ? { kind: 'fail', confirmed, reason }
          : { ...r, confirmed };
      });
    }
  }
  return claims.map((confirmed, i): Rechecked => {
    const r = reads[i];
    if (!('claim' in r)) return { ...r, confirmed };
    const reason = held[i];
    if (reason) return { kind: 'held', confirmed, reason };
    return judge(
      confirmed,
      r.claim,
      r.reclaimPolicy,
      guards,
      pods,
      neighbours,
      {
        autoscalers: guards.autoscalers,
        pausedStatefulSets: guards.pausedStatefulSets ?? pausedStatefulSets,
      },
    );
  });
}

/** The first reason any of a claim's last checks gives to hold it; a check that throws holds it too. */
async function firstReason(
  checks: LastCheck[] | undefined,
  claim: V1PersistentVolumeClaim,
): Promise<string | undefined> {
  if (!checks?.length) return undefined;
  const reasons = await Promise.all(
    checks.map(check =>
      check(claim).catch(e => `its last check failed: ${(e as Error).message}`),
    ),
  );
  return reasons.find(Boolean);
}

/** The orphan rule for one claim against the StatefulSet and pods just read. */
function judge(
  confirmed: Confirmed,
  claim: V1PersistentVolumeClaim,
  reclaimPolicy: string | undefined,
  guards: JobGuards,
  pods: V1Pod[],
  neighbours: V1StatefulSet[],
  signals: ScaleUpSignals,
): Rechecked {
  const verdict = classifyClaims({
    statefulSet: guards.statefulSet,
    neighbours,
    claims: [claim],
    pods,
    volumes: new Map(),
    ...signals,
  });
  const kept = verdict.kept[0];
  const inUse = verdict.inUse[0];
  if (kept || inUse)
    return {
      kind: 'skip',
      confirmed,
      reason: `it is no longer an orphan: ${
        kept ? describeKept(kept, verdict) : describeInUse(inUse, verdict)
      }`,
    };
  const orphan = verdict.orphans[0];
  if (!orphan)
    return {
      kind: 'skip',
      confirmed,
      reason: `not a claim of StatefulSet ${claim.metadata?.namespace}/${guards.statefulSet.metadata?.name}`,
    };
  const volumeName = claim.spec?.volumeName;
  return {
    kind: 'orphan',
    confirmed,
    resourceVersion: claim.metadata!.resourceVersion!,
    outcome: {
      name: confirmed.name,
      uid: confirmed.uid,
      ordinal: confirmed.ordinal,
      bytes: orphan.capacityBytes ?? orphan.requestedBytes,
      ...(volumeName
        ? {
            volume: {
              name: volumeName,
              reclaimPolicy,
              fate: 'unknown' as const,
            },
          }
        : {}),
    },
  };
}
