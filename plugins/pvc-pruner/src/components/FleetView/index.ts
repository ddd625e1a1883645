export { FleetView } from './FleetView';
