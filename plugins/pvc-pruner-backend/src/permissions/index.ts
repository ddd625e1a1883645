export { requireBasicPermission, requirePermission } from './requirePermission';
export { authorizeEntities } from './authorizeEntities';
