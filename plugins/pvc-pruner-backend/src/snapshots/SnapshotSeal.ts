import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DatabaseService } from '@backstage/backend-plugin-api';
import { migratedClient } from '../database/migrate';
import type { VolumeSnapshot } from '../kubernetes/volumeSnapshotTypes';
import {
  labelValue,
  MANAGED_BY,
  SNAPSHOT_ANNOTATIONS,
  SNAPSHOT_LABELS,
} from './snapshotMetadata';

const KEY_NAME = 'snapshot-seal';
const SEAL_VERSION = 'pvc-pruner snapshot seal v1';
const SEALED_LABELS = [
  SNAPSHOT_LABELS.managedBy,
  SNAPSHOT_LABELS.job,
  SNAPSHOT_LABELS.claimUid,
  SNAPSHOT_LABELS.statefulSet,
];
const SEALED_ANNOTATIONS = [
  SNAPSHOT_ANNOTATIONS.claimName,
  SNAPSHOT_ANNOTATIONS.claimLabels,
  SNAPSHOT_ANNOTATIONS.storageClass,
  SNAPSHOT_ANNOTATIONS.accessModes,
  SNAPSHOT_ANNOTATIONS.volumeMode,
  SNAPSHOT_ANNOTATIONS.requestedSize,
];

/**
 * Tells pvc-pruner's own VolumeSnapshots from any that someone labelled
 * `app.kubernetes.io/managed-by: pvc-pruner`: each one the job takes carries
 * an HMAC, with a key only the backend's database holds, of its namespace,
 * name, source claim, pvc-pruner labels and the annotations a restore reads. Without it, whoever may label
 * snapshots in a namespace (but not delete them) could have the expiry task
 * delete any snapshot with the plugin's own rights, or show one on an owner's
 * card to restore from. A snapshot whose labels were edited loses its seal:
 * it is then left alone, never expired.
 */
export class SnapshotSeal {
  /** The seal whose key is in the plugin's database, made there by the first replica to start. */
  static async fromDatabase(database: DatabaseService): Promise<SnapshotSeal> {
    const db = await migratedClient(database);
    await db('pvc_pruner_keys')
      .insert({ name: KEY_NAME, secret: randomBytes(32).toString('base64') })
      .onConflict('name')
      .ignore();
    const row = await db('pvc_pruner_keys').where({ name: KEY_NAME }).first();
    const key = Buffer.from(row?.secret ?? '', 'base64');
    if (key.length < 32)
      throw new Error(
        `pvc-pruner: the snapshot seal key in table pvc_pruner_keys is missing or shorter than 32 bytes`,
      );
    return new SnapshotSeal(key);
  }

  constructor(private readonly key: Buffer) {}

  /** The snapshot as created, with its seal. */
  sealed(snapshot: VolumeSnapshot): VolumeSnapshot {
    const metadata = snapshot.metadata ?? {};
    return {
      ...snapshot,
      metadata: {
        ...metadata,
        annotations: {
          ...metadata.annotations,
          [SNAPSHOT_ANNOTATIONS.seal]: this.sealOf(snapshot),
        },
      },
    };
  }

  /** Whether pvc-pruner took this snapshot, as sealed, and no one changed what the seal covers. */
  isSealed(snapshot: VolumeSnapshot): boolean {
    const written = snapshot.metadata?.annotations?.[SNAPSHOT_ANNOTATIONS.seal];
    if (typeof written !== 'string') return false;
    const expected = Buffer.from(this.sealOf(snapshot));
    const actual = Buffer.from(written);
    return (
      actual.length === expected.length && timingSafeEqual(actual, expected)
    );
  }

  /** Whether this is a snapshot pvc-pruner took of a claim of the StatefulSet (by name), sealed. */
  isTakenOf(
    snapshot: VolumeSnapshot | undefined,
    statefulSet: string,
  ): boolean {
    const labels = snapshot?.metadata?.labels ?? {};
    return (
      !!snapshot &&
      labels[SNAPSHOT_LABELS.managedBy] === MANAGED_BY &&
      labels[SNAPSHOT_LABELS.statefulSet] === labelValue(statefulSet) &&
      this.isSealed(snapshot)
    );
  }

  private sealOf(snapshot: VolumeSnapshot): string {
    const metadata = snapshot.metadata ?? {};
    const labels = metadata.labels ?? {};
    const annotations = metadata.annotations ?? {};
    const covered = [
      SEAL_VERSION,
      metadata.namespace,
      metadata.name,
      snapshot.spec?.source?.persistentVolumeClaimName,
      ...SEALED_LABELS.map(key => labels[key]),
      // What a restore reads; keep-until and restored-at change legitimately.
      ...SEALED_ANNOTATIONS.map(key => annotations[key]),
    ].map(field => field ?? '');
    return createHmac('sha256', this.key)
      .update(JSON.stringify(covered))
      .digest('base64url');
  }
}
