export { MonthlyCost, PricingProvider, usePricing } from './MonthlyCost';
export type { MonthlyCostProps } from './MonthlyCost';
