/**
 * The pvc-pruner frontend plugin: shows and prunes the PersistentVolumeClaims
 * that an entity's StatefulSets left behind.
 *
 * @packageDocumentation
 */

export { pvcPrunerPlugin } from './plugin';
