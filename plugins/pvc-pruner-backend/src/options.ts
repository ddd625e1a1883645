import { Config, ConfigReader } from '@backstage/config';
import type { PausedStatefulSets } from './orphans';

/** pvcPruner.* settings with their defaults (see config.d.ts). */
export interface PvcPrunerOptions {
  clusterRequestTimeoutMs: number;
  volumeWaitTimeoutMs: number;
  leaseDurationSeconds: number;
  requirePermissionFramework: boolean;
  pausedStatefulSets: PausedStatefulSets;
}

function positive(config: Config, key: string, fallback: number) {
  const value = config.getOptionalNumber(key) ?? fallback;
  if (!(value > 0))
    throw new Error(
      `pvcPruner: ${key} must be a positive number, got ${value}`,
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
    requirePermissionFramework:
      config.getOptionalBoolean('requirePermissionFramework') ?? false,
    pausedStatefulSets: pausedStatefulSets(config),
  };
}
