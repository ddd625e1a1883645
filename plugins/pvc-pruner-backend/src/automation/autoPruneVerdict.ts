import type { Entity } from '@backstage/catalog-model';
import {
  AUTO_PRUNE_ANNOTATION,
  AutoPruneState,
  formatDuration,
  parseDuration,
} from 'backstage-plugin-pvc-pruner-common';
import { listRefs, selectsByKubernetesId, WorkloadEntity } from '../ownership';
import { MAX_CLAIMANTS } from '../ownership/ClaimantIndex';
import type { AutoPruneOptions } from './autoPruneOptions';

/** What an entity's auto-prune annotation says, judged against `pvcPruner.autoPrune`. */
export interface EntityAutoPrune {
  state: AutoPruneState;
  /** The annotation as written, at most 100 characters. */
  value?: string;
  /** For `invalid`: what is wrong and how to fix it. */
  problem?: string;
  /** For `opted-in`. */
  graceMs?: number;
}

/** The entity's opt-in: its annotation read and held to `minimumGrace`. */
export function entityAutoPrune(
  entity: Pick<Entity, 'metadata'>,
  options: Pick<AutoPruneOptions, 'enabled' | 'minimumGraceMs'>,
): EntityAutoPrune {
  const raw = entity.metadata.annotations?.[AUTO_PRUNE_ANNOTATION];
  if (!options.enabled) return { state: 'disabled', value: raw?.slice(0, 100) };
  if (raw === undefined) return { state: 'not-opted-in' };
  const value = raw.slice(0, 100);
  const graceMs = parseDuration(raw);
  if (graceMs === undefined)
    return {
      state: 'invalid',
      value,
      problem: `${AUTO_PRUNE_ANNOTATION}: "${value}" is not a grace period; write it in seconds, minutes, hours, days or weeks (s, m, h, d, w), largest first, such as "7d", "36h" or "1w2d"`,
    };
  if (graceMs < options.minimumGraceMs)
    return {
      state: 'invalid',
      value,
      problem: `${AUTO_PRUNE_ANNOTATION}: "${value}" is shorter than the ${formatDuration(
        options.minimumGraceMs,
      )} this Backstage requires (pvcPruner.autoPrune.minimumGrace); set it to "${formatDuration(
        options.minimumGraceMs,
      )}" or more`,
    };
  return { state: 'opted-in', value, graceMs };
}

/** Whether automatic pruning acts on a StatefulSet, and with what grace. */
export type AutomationVerdict =
  | { automated: true; graceMs: number }
  | { automated: false; reason: string };

/**
 * Whether automatic pruning may act on a StatefulSet of `cluster`/`namespace`
 * that `claimants` (every entity whose annotations map it to the StatefulSet,
 * over the whole catalog) claim. Only when the platform has enabled it there,
 * something claims it by the plain `backstage.io/kubernetes-id` label (not
 * only selectors), and every claimant has opted in with a valid annotation:
 * one claimant's annotation must not delete another's claims. The grace is
 * the longest any claimant asks for. `gone` are recorded claimants no longer
 * in the catalog as recorded: nobody can have opted in for them.
 */
export function automationVerdict(
  options: AutoPruneOptions,
  where: { cluster: string; namespace: string },
  claimants: readonly WorkloadEntity[],
  gone: readonly string[] = [],
): AutomationVerdict {
  if (!options.enabled)
    return {
      automated: false,
      reason:
        'automatic pruning is not enabled on this Backstage (pvcPruner.autoPrune.enabled)',
    };
  if (options.clusters && !options.clusters.has(where.cluster))
    return {
      automated: false,
      reason: `cluster "${where.cluster}" is not among those automatic pruning may act in (pvcPruner.autoPrune.clusters)`,
    };
  if (options.namespaces && !options.namespaces.has(where.namespace))
    return {
      automated: false,
      reason: `namespace "${where.namespace}" is not among those automatic pruning may act in (pvcPruner.autoPrune.namespaces)`,
    };
  if (gone.length > 0)
    return {
      automated: false,
      reason: `it was recorded as claimed by ${listRefs([
        ...gone,
      ])}, no longer in the catalog as recorded, who cannot opt in`,
    };
  if (claimants.length === 0)
    return {
      automated: false,
      reason:
        'no catalog entity claims it, and automatic pruning never acts on unclaimed StatefulSets',
    };
  if (claimants.length > MAX_CLAIMANTS)
    return {
      automated: false,
      reason: `more than ${MAX_CLAIMANTS} catalog entities claim it`,
    };
  if (!claimants.some(selectsByKubernetesId))
    return {
      automated: false,
      reason:
        "only label selectors claim it, which do not show it is anyone's own; automatic pruning needs an entity that selects it by backstage.io/kubernetes-id",
    };
  let graceMs = 0;
  const notOptedIn: string[] = [];
  const invalid: string[] = [];
  for (const claimant of claimants) {
    const judged = entityAutoPrune(claimant.entity, options);
    if (judged.state === 'opted-in')
      graceMs = Math.max(graceMs, judged.graceMs!);
    else if (judged.state === 'invalid') invalid.push(claimant.entityRef);
    else notOptedIn.push(claimant.entityRef);
  }
  if (notOptedIn.length > 0)
    return {
      automated: false,
      reason: `it is also claimed by ${listRefs(notOptedIn.sort())}, which ${
        notOptedIn.length === 1 ? 'has' : 'have'
      } not opted in (${AUTO_PRUNE_ANNOTATION}); every entity that claims a StatefulSet must opt in`,
    };
  if (invalid.length > 0)
    return {
      automated: false,
      reason: `the ${AUTO_PRUNE_ANNOTATION} annotation of ${listRefs(
        invalid.sort(),
      )} is not valid`,
    };
  return { automated: true, graceMs };
}
