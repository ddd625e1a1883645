export { FleetService, type FleetQuery } from './FleetService';
export { UnownedOrphans } from './UnownedOrphans';
