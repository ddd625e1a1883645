import { createContext, PropsWithChildren, useContext } from 'react';
import { PricingSummary } from 'backstage-plugin-pvc-pruner-common';
import { formatMonthly } from '../../utils/money';

const PricingContext = createContext<PricingSummary | undefined>(undefined);

/** Makes the pricing of a response (its currency) known to the costs shown below it. */
export function PricingProvider(
  props: PropsWithChildren<{ pricing?: PricingSummary }>,
) {
  return (
    <PricingContext.Provider value={props.pricing}>
      {props.children}
    </PricingContext.Provider>
  );
}

/** The pricing of the response being shown; undefined when the backend has none. */
export function usePricing(): PricingSummary | undefined {
  return useContext(PricingContext);
}

/** Props of {@link MonthlyCost}. */
export interface MonthlyCostProps {
  /** The backend's figure; nothing is shown without one (no pricing, or no price). */
  amount?: number;
  /** Text before the amount, e.g. " · ". */
  prefix?: string;
}

/** "€12.40 a month" in the response's currency, or nothing when there is no price. */
export function MonthlyCost(props: MonthlyCostProps) {
  const pricing = usePricing();
  if (!pricing || props.amount === undefined) return null;
  return (
    <>
      {props.prefix}
      {formatMonthly(props.amount, pricing.currency)}
    </>
  );
}
