export { pvcPrunerPlugin as default } from './plugin';
