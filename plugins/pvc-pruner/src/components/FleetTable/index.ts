export { FleetTable, EntityLink, ownerTitle } from './FleetTable';
export type { FleetStatefulSetAction, FleetTableProps } from './FleetTable';
