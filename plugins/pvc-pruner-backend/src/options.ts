import { Config, ConfigReader } from '@backstage/config';
import type { PausedStatefulSets } from './orphans';

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
  };
}
