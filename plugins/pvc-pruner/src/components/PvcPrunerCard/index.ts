export { PvcPrunerCard } from './PvcPrunerCard';
export type { PvcPrunerCardProps } from './PvcPrunerCard';
