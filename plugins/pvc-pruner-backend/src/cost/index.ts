export { PriceList } from './PriceList';
export { priceStatefulSet, pricingSummary } from './costs';
