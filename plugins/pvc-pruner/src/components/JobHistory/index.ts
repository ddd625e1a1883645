export { JobHistory } from './JobHistory';
export type { JobHistoryProps } from './JobHistory';
