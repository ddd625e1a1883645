export { TerminatingNotice } from './TerminatingNotice';
export type { TerminatingNoticeProps } from './TerminatingNotice';
