/**
 * The oracle's judgement of volume reclaims, from the simulator's record of
 * every change of a PersistentVolume's reclaim policy: a reclaim is a
 * replica's request (not a dry run) that set `persistentVolumeReclaimPolicy`
 * to `Delete`, after which the provisioner deletes the disk.
 */
import type { ReclaimPolicyChange } from 'kube-sim';
import { JOB_END_BOUND_MS } from './polling';
import type { ScenarioRun } from './runScenario';

/** The audit event of a reclaim request (router.ts: `POST /v1/reclaim-jobs`). */
export const RECLAIM_AUDIT_EVENT = 'volume-reclaim';

export interface ReclaimFigures {
  /** Reclaims judged: a replica set a volume's policy to Delete. */
  reclaims: number;
  /** …of which the volume was then deleted by its provisioner within the scenario. */
  deletedAfter: number;
}

type Flag = (
  invariant:
    | 'volume-reclaimed-while-bound'
    | 'reclaim-without-audit-event'
    | 'job-did-not-end',
  detail: string,
) => void;

function describe(c: ReclaimPolicyChange) {
  const ref = c.claimRef;
  return `volume ${c.volume} (uid ${c.volumeUid}, phase ${
    c.phase ?? 'none'
  }, claimRef ${
    ref ? `${ref.namespace}/${ref.name} uid ${ref.uid ?? 'none'}` : 'none'
  })`;
}

/**
 * Every reclaim met a volume that was Released, from a claim that no longer
 * existed (by namespace, name and uid), at the instant of the patch (the
 * patch carries the volume's resourceVersion, so nothing can change between
 * the plugin's last read and the patch: there is no window to allow), and
 * released from the very claim uid the user confirmed in a reclaim sent to
 * that replica; and every reclaim has its audit event on the replica that
 * made it, naming the volume and not a dry run; every answered reclaim
 * request its initiated one, and every reclaim job its closing one. Every
 * reclaim job ends.
 */
export function judgeReclaims(run: ScenarioRun, flag: Flag): ReclaimFigures {
  const figures: ReclaimFigures = { reclaims: 0, deletedAfter: 0 };
  const volumesDeleted = new Set(run.volumeDeletions.map(v => v.uid));
  const audit = run.audit.filter(a => a.eventId === RECLAIM_AUDIT_EVENT);
  for (const c of run.policyChanges) {
    const replica = run.replicaOfUser.get(c.request?.user ?? '');
    if (replica === undefined || c.to !== 'Delete' || c.request?.dryRun)
      continue;
    figures.reclaims++;
    if (volumesDeleted.has(c.volumeUid)) figures.deletedAfter++;
    const by = `replica ${replica} (${c.request!.verb} served ${(
      c.at - c.request!.at
    ).toFixed(0)} ms after it arrived)`;
    const confirmed = run.reclaims
      .filter(
        r =>
          r.replica === replica &&
          !r.dryRun &&
          r.outcome.kind !== 'refused' &&
          r.sentAt <= c.at,
      )
      .flatMap(r => r.volumes)
      .filter(v => v.name === c.volume && v.uid === c.volumeUid);
    if (c.phase !== 'Released')
      flag(
        'volume-reclaimed-while-bound',
        `${describe(c)} was reclaimed by ${by} while ${
          c.phase ?? 'in no phase'
        }, not Released`,
      );
    else if (!c.claimRef?.uid)
      flag(
        'volume-reclaimed-while-bound',
        `${describe(
          c,
        )} was reclaimed by ${by} though its claimRef named no claim uid: it was released from nothing`,
      );
    else if (c.claimExists)
      flag(
        'volume-reclaimed-while-bound',
        `${describe(
          c,
        )} was reclaimed by ${by} while the claim its claimRef names existed: bound to it, not released`,
      );
    else if (!confirmed.some(v => v.claimUid === c.claimRef!.uid))
      flag(
        'volume-reclaimed-while-bound',
        `${describe(
          c,
        )} was reclaimed by ${by}, released from another claim than the one the user confirmed it released from (${
          confirmed.map(v => `uid ${v.claimUid}`).join(', ') ||
          'no reclaim sent to that replica confirmed it'
        })`,
      );
    const audited = audit.some(
      a =>
        a.replica === replica &&
        a.status === 'initiated' &&
        a.meta?.dryRun !== true &&
        Array.isArray(a.meta?.volumes) &&
        a.meta!.volumes.includes(c.volume),
    );
    if (!audited)
      flag(
        'reclaim-without-audit-event',
        `${describe(
          c,
        )} was reclaimed by ${by}, and replica ${replica} logged no ${RECLAIM_AUDIT_EVENT} audit event naming it (not a dry run)`,
      );
  }
  for (const r of run.reclaims) {
    if (r.outcome.kind === 'unknown') continue;
    const initiated = audit.filter(
      a => a.replica === r.replica && a.status === 'initiated',
    ).length;
    const answered = run.reclaims.filter(
      x => x.replica === r.replica && x.outcome.kind !== 'unknown',
    ).length;
    if (initiated < answered)
      flag(
        'reclaim-without-audit-event',
        `replica ${r.replica}: ${answered} reclaim request(s), ${initiated} ${RECLAIM_AUDIT_EVENT} audit event(s)`,
      );
    if (r.outcome.kind !== 'accepted') continue;
    if (!r.final) {
      flag(
        'job-did-not-end',
        `reclaim job ${r.id} (replica ${r.replica}) did not end within ${
          JOB_END_BOUND_MS / 1000
        } s`,
      );
      continue;
    }
    const closed = audit.some(
      a =>
        a.replica === r.replica &&
        a.status !== 'initiated' &&
        a.meta?.jobId === r.id,
    );
    if (!closed && r.final.status !== 'interrupted')
      flag(
        'reclaim-without-audit-event',
        `reclaim job ${r.id} (${r.final.status}) has no closing ${RECLAIM_AUDIT_EVENT} audit event on replica ${r.replica}`,
      );
  }
  return figures;
}
