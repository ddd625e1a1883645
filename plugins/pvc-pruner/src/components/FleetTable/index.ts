export { FleetTable, EntityLink, ownerTitle } from './FleetTable';
export type { FleetTableProps } from './FleetTable';
