/**
 * The oracle's judgement of volume reclaims, from the simulator's record of
 * every change of a PersistentVolume's reclaim policy: a reclaim is a
 * replica's request (not a dry run) that set `persistentVolumeReclaimPolicy`
 * to `Delete`, after which the provisioner deletes the disk.
 */
import type { ReclaimPolicyChange } from 'kube-sim';
import type { AuditEvent } from './replicas';

/** The audit event of a reclaim request (router.ts: `POST /v1/reclaim-jobs`). */
export const RECLAIM_AUDIT_EVENT = 'volume-reclaim';

export interface ReclaimFigures {
  /** Reclaims judged: a replica set a volume's policy to Delete. */
  reclaims: number;
  /** …of which the volume was then deleted by its provisioner within the scenario. */
  deletedAfter: number;
}

type Flag = (
  invariant: 'volume-reclaimed-while-bound' | 'reclaim-without-audit-event',
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
 * the plugin's last read and the patch: there is no window to allow); and
 * every reclaim has its audit event on the replica that made it, naming the
 * volume and not a dry run.
 */
export function judgeReclaims(
  changes: ReclaimPolicyChange[],
  volumesDeleted: Set<string>,
  audit: AuditEvent[],
  replicaOfUser: Map<string, number>,
  flag: Flag,
): ReclaimFigures {
  const figures: ReclaimFigures = { reclaims: 0, deletedAfter: 0 };
  for (const c of changes) {
    const replica = replicaOfUser.get(c.request?.user ?? '');
    if (replica === undefined || c.to !== 'Delete' || c.request?.dryRun)
      continue;
    figures.reclaims++;
    if (volumesDeleted.has(c.volumeUid)) figures.deletedAfter++;
    const by = `replica ${replica} (${c.request!.verb} served ${(
      c.at - c.request!.at
    ).toFixed(0)} ms after it arrived)`;
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
    const audited = audit.some(
      a =>
        a.replica === replica &&
        a.eventId === RECLAIM_AUDIT_EVENT &&
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
  return figures;
}
