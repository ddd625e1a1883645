export { LeftBehindFleet, type LeftBehindFleetProps } from './LeftBehindFleet';
