import { Config, ConfigReader } from '@backstage/config';

/** pvcPruner.* settings with their defaults (see config.d.ts). */
export interface PvcPrunerOptions {
  clusterRequestTimeoutMs: number;
  volumeWaitTimeoutMs: number;
  leaseDurationSeconds: number;
  requirePermissionFramework: boolean;
  /** The annotation on a Namespace that names who may prune in it, when the platform binds namespaces to owners. */
  namespaceOwnerAnnotation?: string;
}

function positive(config: Config, key: string, fallback: number) {
  const value = config.getOptionalNumber(key) ?? fallback;
  if (!(value > 0))
    throw new Error(
      `pvcPruner: ${key} must be a positive number, got ${value}`,
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
    namespaceOwnerAnnotation: annotationKey(
      config,
      'ownership.namespaceOwnerAnnotation',
    ),
  };
}
