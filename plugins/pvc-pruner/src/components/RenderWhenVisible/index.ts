export { RenderWhenVisible } from './RenderWhenVisible';
export type { RenderWhenVisibleProps } from './RenderWhenVisible';
