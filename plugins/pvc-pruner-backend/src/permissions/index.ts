export { requireBasicPermission, requirePermission } from './requirePermission';
export { authorizeEntities } from './authorizeEntities';
export {
  permissionFrameworkGate,
  PERMISSION_FRAMEWORK_OFF_REFUSAL,
} from './permissionFrameworkGate';
