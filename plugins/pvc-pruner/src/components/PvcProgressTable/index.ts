export { PvcProgressTable } from './PvcProgressTable';
export type { PvcProgressTableProps } from './PvcProgressTable';
