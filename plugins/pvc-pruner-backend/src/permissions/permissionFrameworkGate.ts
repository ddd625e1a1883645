import { PvcPrunerOptions } from '../options';

const HOW_TO_ENABLE =
  'set permission.enabled: true and install a permission policy (see "Permissions" in the pvc-pruner README)';
const OPT_OUT =
  'pvcPruner.allowPruneWithoutPermissionFramework: true, which lets every signed-in user prune every claim';

/** The answer to every prune and dry run while the framework is off and nobody opted out. */
export const PERMISSION_FRAMEWORK_OFF_REFUSAL = `Pruning is disabled: the permission framework is off (permission.enabled is not true), so nothing decides who may prune which claims. Your Backstage administrators can ${HOW_TO_ENABLE}, or opt out with ${OPT_OUT}`;

/** Whether prunes are refused, and what to log at start about it. */
export interface PermissionFrameworkGate {
  /** Set when every prune (dry runs too) is refused, with this reason. */
  pruneDisabledReason?: string;
  warnings: string[];
}

/**
 * Decides, at start, what prunes may do with the permission framework on or
 * off. With it off, nothing limits who prunes what, so pruning is refused
 * unless `pvcPruner.allowPruneWithoutPermissionFramework` says, in so many
 * words, that every signed-in user may prune everything.
 *
 * The removed `pvcPruner.requirePermissionFramework` is never read as its
 * successor: where its value would now mean something else (false, with the
 * framework off, used to let everyone prune), starting fails with what to
 * write instead; anywhere else it is a warning to remove it.
 */
export function permissionFrameworkGate(options: {
  permissionsEnabled: boolean;
  pvcPruner: Pick<
    PvcPrunerOptions,
    'allowPruneWithoutPermissionFramework' | 'removedRequirePermissionFramework'
  >;
}): PermissionFrameworkGate {
  const { permissionsEnabled } = options;
  const {
    allowPruneWithoutPermissionFramework: allow,
    removedRequirePermissionFramework: removed,
  } = options.pvcPruner;
  const warnings: string[] = [];
  if (removed !== undefined) {
    const replaced =
      'pvcPruner.requirePermissionFramework was removed: pruning is now refused while the permission framework is off (permission.enabled is not true), unless pvcPruner.allowPruneWithoutPermissionFramework is true';
    if (!permissionsEnabled && removed === false && !allow)
      throw new Error(
        `${replaced}. This config sets it to false with the framework off, which let every signed-in user prune. To keep that, replace it with pvcPruner.allowPruneWithoutPermissionFramework: true. To refuse pruning instead, remove it; to let owners prune, ${HOW_TO_ENABLE}.`,
      );
    warnings.push(
      `pvc-pruner: ${replaced}. It is no longer read; remove it from your config.`,
    );
  }
  if (permissionsEnabled) return { warnings };
  if (allow) {
    warnings.push(
      'pvc-pruner: the permission framework is off (permission.enabled is not true) and pvcPruner.allowPruneWithoutPermissionFramework is true: every signed-in user may prune every claim',
    );
    return { warnings };
  }
  warnings.push(
    `pvc-pruner: the permission framework is off (permission.enabled is not true), so every prune and dry run is refused. To let owners prune, ${HOW_TO_ENABLE}; or set ${OPT_OUT}`,
  );
  return { pruneDisabledReason: PERMISSION_FRAMEWORK_OFF_REFUSAL, warnings };
}
