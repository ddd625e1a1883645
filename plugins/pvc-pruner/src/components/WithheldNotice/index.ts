export { WithheldNotice } from './WithheldNotice';
export type { WithheldNoticeProps } from './WithheldNotice';
