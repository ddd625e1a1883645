export { FleetPage } from './FleetPage';
