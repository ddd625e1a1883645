export { IconLabel } from './IconLabel';
export type { IconLabelProps, IconLabelTone } from './IconLabel';
