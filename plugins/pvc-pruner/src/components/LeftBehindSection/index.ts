export {
  LeftBehindGroupHeader,
  LeftBehindSection,
  leftByOf,
  type LeftBehindSectionProps,
} from './LeftBehindSection';
