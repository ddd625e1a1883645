export { EventLog } from './EventLog';
export type { EventLogProps } from './EventLog';
