export { FleetService, type FleetQuery } from './FleetService';
