export { ScaleUpNotice } from './ScaleUpNotice';
export type { ScaleUpNoticeProps } from './ScaleUpNotice';
