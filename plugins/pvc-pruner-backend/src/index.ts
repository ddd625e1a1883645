/**
 * The pvc-pruner backend plugin: finds the PersistentVolumeClaims that an
 * entity's scaled-down StatefulSets left behind, and prunes them safely.
 *
 * @packageDocumentation
 */

export { pvcPrunerPlugin as default } from './plugin';
export { pvcPrunerAuthStrategyExtensionPoint } from './plugin';
