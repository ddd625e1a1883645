export {
  LeftBehindFleet,
  leftBehindSummary,
  type LeftBehindFleetProps,
} from './LeftBehindFleet';
