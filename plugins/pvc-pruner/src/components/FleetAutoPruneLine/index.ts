export { FleetAutoPruneLine } from './FleetAutoPruneLine';
export type { FleetAutoPruneLineProps } from './FleetAutoPruneLine';
