import { Config, ConfigReader } from '@backstage/config';

/** pvcPruner.* settings with their defaults (see config.d.ts). */
export interface PvcPrunerOptions {
  clusterRequestTimeoutMs: number;
  volumeWaitTimeoutMs: number;
  leaseDurationSeconds: number;
  /** Let every signed-in user prune while the permission framework is off. */
  allowPruneWithoutPermissionFramework: boolean;
  /** The removed `requirePermissionFramework`, when a config still sets it. */
  removedRequirePermissionFramework?: boolean;
}

function positive(config: Config, key: string, fallback: number) {
  const value = config.getOptionalNumber(key) ?? fallback;
  if (!(value > 0))
    throw new Error(
      `pvcPruner: ${key} must be a positive number, got ${value}`,
    );
  return value;
}

export function readOptions(root: Config): PvcPrunerOptions {
  const config = root.getOptionalConfig('pvcPruner') ?? new ConfigReader({});
  return {
    clusterRequestTimeoutMs:
      positive(config, 'clusterRequestTimeoutSeconds', 10) * 1000,
    volumeWaitTimeoutMs:
      positive(config, 'volumeWaitTimeoutSeconds', 120) * 1000,
    leaseDurationSeconds: positive(config, 'leaseDurationSeconds', 30),
    allowPruneWithoutPermissionFramework:
      config.getOptionalBoolean('allowPruneWithoutPermissionFramework') ??
      false,
    removedRequirePermissionFramework: config.getOptionalBoolean(
      'requirePermissionFramework',
    ),
  };
}
