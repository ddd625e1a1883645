/**
 * Code shared by the pvc-pruner frontend and backend plugins.
 *
 * @packageDocumentation
 */

/**
 * The id of the pvc-pruner plugin, used by both the frontend and the backend
 * plugin (the backend serves its routes under `/api/pvc-pruner`).
 *
 * @public
 */
export const PVC_PRUNER_PLUGIN_ID = 'pvc-pruner';

export * from './autoPrune';
export * from './keptReasons';
export * from './permissions';
export * from './quantity';
export * from './types';
export type { components as PvcPrunerApiComponents } from './schema/openapi';
