export { requirePermission } from './requirePermission';
export { authorizeEntities } from './authorizeEntities';
