export { OrphanTable, ORPHAN_PAGE_SIZE } from './OrphanTable';
export type { OrphanTableProps } from './OrphanTable';
