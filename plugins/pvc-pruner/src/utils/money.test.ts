import { formatMoney, formatMonthly } from './money';

describe('formatMoney', () => {
  it('formats in the currency, as Intl does for the locale', () => {
    expect(formatMoney(12.4, 'EUR')).toBe(
      new Intl.NumberFormat(undefined, {
        style: 'currency',
        currency: 'EUR',
      }).format(12.4),
    );
    expect(formatMoney(1234.5, 'USD')).toMatch(/1,234\.50/);
    expect(formatMonthly(3, 'USD')).toBe('$3.00 a month');
  });
});
