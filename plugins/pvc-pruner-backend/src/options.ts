import { Config, ConfigReader } from '@backstage/config';
import type { PausedStatefulSets } from './orphans';
import {
  AutoPruneOptions,
  readAutoPruneOptions,
} from './automation/autoPruneOptions';

/** pvcPruner.* settings with their defaults (see config.d.ts). */
export interface PvcPrunerOptions {
  clusterRequestTimeoutMs: number;
  volumeWaitTimeoutMs: number;
  leaseDurationSeconds: number;
  /** Finished jobs, their events and orphan sightings are deleted after this. */
  retentionDays: number;
  /** Queued or running jobs (dry runs included) one user may have, across replicas. */
  runningJobsPerUser: number;
  /** Event streams one user may have open on one Backstage instance. */
  eventStreamsPerUser: number;
  /** Let every signed-in user prune while the permission framework is off. */
  allowPruneWithoutPermissionFramework: boolean;
  /** The removed `requirePermissionFramework`, when a config still sets it. */
  removedRequirePermissionFramework?: boolean;
  /** The annotation on a Namespace that names who may prune in it, when the platform binds namespaces to owners. */
  namespaceOwnerAnnotation?: string;
  pausedStatefulSets: PausedStatefulSets;
  catalogClusters: { allowAwsAnnotations: boolean };
  snapshots: SnapshotOptions;
  /** `pvcPruner.reclaim.leaseNamespace`: where reclaim Leases are kept. */
  reclaimLeaseNamespace: string;
  autoPrune: AutoPruneOptions;
}

/** `pvcPruner.snapshots`: a VolumeSnapshot of each claim before it is deleted. */
export interface SnapshotOptions {
  /** Whether a prune may ask for snapshots at all. */
  enabled: boolean;
  /** How long a snapshot is kept, from when the job took it. */
  retentionDays: number;
  /** How long a job waits for each snapshot to be readyToUse. */
  timeoutMs: number;
  /** When true, a claim that cannot be snapshotted is not deleted. */
  required: boolean;
  /** VolumeSnapshotClass by StorageClass name; other classes use their driver's default. */
  classByStorageClass: ReadonlyMap<string, string>;
  /** How far ahead of now `POST /v1/snapshots/keep` may set a snapshot's keep-until, in days. */
  maxKeepDays: number;
}

function positive(config: Config, key: string, fallback: number) {
  const value = config.getOptionalNumber(key) ?? fallback;
  if (!(value > 0))
    throw new Error(
      `pvcPruner: ${key} must be a positive number, got ${value}`,
    );
  return value;
}

function positiveInteger(config: Config, key: string, fallback: number) {
  const value = positive(config, key, fallback);
  if (!Number.isInteger(value))
    throw new Error(`pvcPruner: ${key} must be a whole number, got ${value}`);
  return value;
}

/** Retention shorter than a day would delete the sightings of claims that are still orphans (see OrphanSightingStore). */
function atLeastOneDay(config: Config, key: string, fallback: number) {
  const value = positive(config, key, fallback);
  if (value < 1)
    throw new Error(`pvcPruner: ${key} must be at least 1, got ${value}`);
  return value;
}

/** At most `max`: a value past it is a typo that would pin a job, or a snapshot, for far too long. */
function atMost(key: string, value: number, max: number, unit: string) {
  if (value > max)
    throw new Error(
      `pvcPruner: ${key} must be at most ${max} (${unit}), got ${value}`,
    );
  return value;
}

/** A Kubernetes annotation key (`prefix/name` or `name`), as Kubernetes validates one. */
const ANNOTATION_KEY =
  /^(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

function annotationKey(config: Config, key: string): string | undefined {
  const value = config.getOptionalString(key);
  if (value === undefined) return undefined;
  if (!ANNOTATION_KEY.test(value) || value.length > 316)
    throw new Error(
      `pvcPruner: ${key} must be a Kubernetes annotation key such as backstage.io/owner, got "${value}"`,
    );
  return value;
}

const PAUSED_STATEFULSETS: readonly PausedStatefulSets[] = ['keep', 'offer'];

function pausedStatefulSets(config: Config): PausedStatefulSets {
  const value = config.getOptionalString('pausedStatefulSets') ?? 'keep';
  if (!PAUSED_STATEFULSETS.includes(value as PausedStatefulSets))
    throw new Error(
      `pvcPruner: pausedStatefulSets must be 'keep' (keep the claims of a StatefulSet scaled to 0, the default) or 'offer' (offer them as orphans), got '${value}'`,
    );
  return value as PausedStatefulSets;
}

/** A lowercase RFC 1123 name, as Kubernetes names StorageClasses and VolumeSnapshotClasses. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function isObjectName(name: string): boolean {
  return name.length <= 253 && OBJECT_NAME.test(name);
}

function snapshotOptions(config: Config): SnapshotOptions {
  const classes = new Map<string, string>();
  // Read whole: StorageClass names may contain dots, which config keys would take for paths.
  const mapped = config.getOptional('snapshots.storageClasses') ?? {};
  if (typeof mapped !== 'object' || mapped === null || Array.isArray(mapped))
    throw new Error(
      'pvcPruner: snapshots.storageClasses must map StorageClass names to VolumeSnapshotClass names, e.g. { gp3: ebs-snapshots }',
    );
  for (const [storageClass, snapshotClass] of Object.entries(mapped)) {
    const key = `snapshots.storageClasses.${storageClass}`;
    if (!isObjectName(storageClass))
      throw new Error(
        `pvcPruner: ${key}: "${storageClass}" is not a StorageClass name (lowercase letters, digits, '-' and '.')`,
      );
    if (typeof snapshotClass !== 'string' || !isObjectName(snapshotClass))
      throw new Error(
        `pvcPruner: ${key} must be the name of a VolumeSnapshotClass (lowercase letters, digits, '-' and '.'), got ${JSON.stringify(
          snapshotClass,
        )}`,
      );
    classes.set(storageClass, snapshotClass);
  }
  return {
    enabled: config.getOptionalBoolean('snapshots.enabled') ?? false,
    retentionDays: atMost(
      'snapshots.retentionDays',
      positiveInteger(config, 'snapshots.retentionDays', 7),
      3650,
      'ten years',
    ),
    timeoutMs:
      atMost(
        'snapshots.timeoutSeconds',
        positive(config, 'snapshots.timeoutSeconds', 300),
        3600,
        'an hour',
      ) * 1000,
    required: config.getOptionalBoolean('snapshots.required') ?? true,
    classByStorageClass: classes,
    maxKeepDays: atMost(
      'snapshots.maxKeepDays',
      positiveInteger(config, 'snapshots.maxKeepDays', 90),
      3650,
      'ten years',
    ),
  };
}

export function readOptions(root: Config): PvcPrunerOptions {
  const config = root.getOptionalConfig('pvcPruner') ?? new ConfigReader({});
  return {
    clusterRequestTimeoutMs:
      positive(config, 'clusterRequestTimeoutSeconds', 10) * 1000,
    volumeWaitTimeoutMs:
      positive(config, 'volumeWaitTimeoutSeconds', 120) * 1000,
    leaseDurationSeconds: positive(config, 'leaseDurationSeconds', 30),
    retentionDays: atLeastOneDay(config, 'retentionDays', 90),
    // A few pages open, each following a dry run then a prune of a few StatefulSets.
    runningJobsPerUser: positiveInteger(
      config,
      'limits.runningJobsPerUser',
      10,
    ),
    // Two pages following each of those jobs.
    eventStreamsPerUser: positiveInteger(
      config,
      'limits.eventStreamsPerUser',
      20,
    ),
    allowPruneWithoutPermissionFramework:
      config.getOptionalBoolean('allowPruneWithoutPermissionFramework') ??
      false,
    removedRequirePermissionFramework: config.getOptionalBoolean(
      'requirePermissionFramework',
    ),
    namespaceOwnerAnnotation: annotationKey(
      config,
      'ownership.namespaceOwnerAnnotation',
    ),
    pausedStatefulSets: pausedStatefulSets(config),
    catalogClusters: {
      allowAwsAnnotations:
        config.getOptionalBoolean('catalogClusters.allowAwsAnnotations') ??
        false,
    },
    snapshots: snapshotOptions(config),
    reclaimLeaseNamespace: namespaceName(config, 'reclaim.leaseNamespace'),
    autoPrune: readAutoPruneOptions(config),
  };
}

/** A namespace name (an RFC 1123 label); `default` unless set: it always exists and cannot be deleted. */
function namespaceName(config: Config, key: string): string {
  const value = config.getOptionalString(key) ?? 'default';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(value) || value.length > 63)
    throw new Error(
      `pvcPruner: ${key} must be a namespace name, got "${value}"`,
    );
  return value;
}
