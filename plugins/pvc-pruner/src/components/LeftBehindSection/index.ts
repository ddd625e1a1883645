export {
  LeftBehindSection,
  type LeftBehindSectionProps,
} from './LeftBehindSection';
