export { requirePermission } from './requirePermission';
