export { keepsClaimsForScaleUp, ScaleUpNotice } from './ScaleUpNotice';
export type { ScaleUpNoticeProps } from './ScaleUpNotice';
