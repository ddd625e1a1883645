export { FleetFilters } from './FleetFilters';
export type { FleetFiltersProps } from './FleetFilters';
