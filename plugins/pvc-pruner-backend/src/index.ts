export { pvcPrunerPlugin as default } from './plugin';
export { pvcPrunerAuthStrategyExtensionPoint } from './plugin';
