import { Config, ConfigReader } from '@backstage/config';

/** pvcPruner.* settings with their defaults (see config.d.ts). */
export interface PvcPrunerOptions {
  clusterRequestTimeoutMs: number;
  volumeWaitTimeoutMs: number;
  leaseDurationSeconds: number;
  requirePermissionFramework: boolean;
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
    catalogClusters: {
      allowAwsAnnotations:
        config.getOptionalBoolean('catalogClusters.allowAwsAnnotations') ??
        false,
    },
  };
}
