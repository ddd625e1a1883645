export { SharedWithNotice } from './SharedWithNotice';
export type { SharedWithNoticeProps } from './SharedWithNotice';
