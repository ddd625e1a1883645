export { EntityLinks } from './EntityLinks';
export type { EntityLinksProps } from './EntityLinks';
