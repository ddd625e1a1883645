export { NotAllowedNotice } from './NotAllowedNotice';
export type { NotAllowedNoticeProps } from './NotAllowedNotice';
