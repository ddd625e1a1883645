import { Config, ConfigReader } from '@backstage/config';
import {
  readSchedulerServiceTaskScheduleDefinitionFromConfig,
  SchedulerServiceTaskScheduleDefinition,
} from '@backstage/backend-plugin-api';
import { parseDuration } from 'backstage-plugin-pvc-pruner-common';

/** `pvcPruner.autoPrune`: automatic pruning of opted-in entities' orphans. */
export interface AutoPruneOptions {
  enabled: boolean;
  /** When the global task runs (a scheduler frequency and timeout). */
  schedule: SchedulerServiceTaskScheduleDefinition;
  /** No annotation's grace may be shorter than this. */
  minimumGraceMs: number;
  /** Only these clusters (by name) are automated; undefined: all. */
  clusters?: ReadonlySet<string>;
  /** Only these namespaces are automated; undefined: all. */
  namespaces?: ReadonlySet<string>;
  maxClaimsPerRun: number;
  maxBytesPerRun: number;
  /** Owners are told this long before a claim becomes eligible. */
  notifyBeforeMs: number;
  /** Refuse to run when owners cannot be told (no notifications backend). */
  requireNotifications: boolean;
}

function duration(config: Config, key: string, fallback: string): number {
  const text = config.getOptionalString(key) ?? fallback;
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new Error(
      `pvcPruner: autoPrune.${key} must be a duration such as "7d", "36h" or "1d12h" (seconds s, minutes m, hours h, days d, weeks w), got "${text}"`,
    );
  return ms;
}

function positiveInteger(config: Config, key: string, fallback: number) {
  const value = config.getOptionalNumber(key) ?? fallback;
  if (!Number.isInteger(value) || value < 1)
    throw new Error(
      `pvcPruner: autoPrune.${key} must be a whole number of at least 1, got ${value}`,
    );
  return value;
}

function allowList(
  config: Config,
  key: string,
): ReadonlySet<string> | undefined {
  const values = config.getOptionalStringArray(key);
  if (values === undefined) return undefined;
  if (values.length === 0)
    throw new Error(
      `pvcPruner: autoPrune.${key} is empty, which would automate nothing; list at least one, or leave it out to allow all`,
    );
  return new Set(values);
}

const TIB = 1024 ** 4;

function positiveBytes(config: Config, key: string, fallback: number) {
  const value = config.getOptionalNumber(key) ?? fallback;
  if (!(value > 0))
    throw new Error(
      `pvcPruner: autoPrune.${key} must be a positive number of bytes, got ${value}`,
    );
  return value;
}

/** Reads `pvcPruner.autoPrune` (`config` is the `pvcPruner` block). */
export function readAutoPruneOptions(config: Config): AutoPruneOptions {
  const auto = config.getOptionalConfig('autoPrune');
  const enabled = auto?.getOptionalBoolean('enabled') ?? false;
  const read = (c: Config) => ({
    schedule: c.has('schedule')
      ? readSchedulerServiceTaskScheduleDefinitionFromConfig(
          c.getConfig('schedule'),
        )
      : { frequency: { hours: 1 }, timeout: { minutes: 30 } },
    minimumGraceMs: duration(c, 'minimumGrace', '1d'),
    clusters: allowList(c, 'clusters'),
    namespaces: allowList(c, 'namespaces'),
    maxClaimsPerRun: positiveInteger(c, 'maxClaimsPerRun', 50),
    maxBytesPerRun: positiveBytes(c, 'maxBytesPerRun', 10 * TIB),
    notifyBeforeMs: duration(c, 'notifyBefore', '2d'),
    requireNotifications: c.getOptionalBoolean('requireNotifications') ?? false,
  });
  // Read even when disabled, so a typo fails at startup, not the day it is enabled.
  return { enabled, ...read(auto ?? new ConfigReader({})) };
}
