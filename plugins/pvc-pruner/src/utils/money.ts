/** An amount in a currency for people, in their locale: "€12.40". */
export function formatMoney(amount: number, currency: string): string {
  return new Intl.NumberFormat(undefined, {
    style: 'currency',
    currency,
  }).format(amount);
}

/** "€12.40 a month". */
export function formatMonthly(amount: number, currency: string): string {
  return `${formatMoney(amount, currency)} a month`;
}
