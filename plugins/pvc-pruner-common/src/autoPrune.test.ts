import { formatDuration, parseDuration } from './autoPrune';

describe('parseDuration', () => {
  it.each([
    ['7d', 7 * 86_400_000],
    ['36h', 36 * 3_600_000],
    ['1w2d', 9 * 86_400_000],
    ['1d12h', 36 * 3_600_000],
    [' 90m ', 90 * 60_000],
    ['1m30s', 90_000],
  ])('reads %s', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each([
    '',
    '7',
    'd',
    '7 days',
    '-1d',
    '0d',
    '1.5d',
    '12h1d',
    '30s1m',
    'P7D',
    '3651d',
  ])('refuses %j', text => expect(parseDuration(text)).toBeUndefined());

  it('writes durations back in the largest exact units', () => {
    expect(formatDuration(90 * 60_000)).toBe('1h30m');
    expect(formatDuration(9 * 86_400_000)).toBe('1w2d');
    expect(formatDuration(parseDuration('7d')!)).toBe('1w');
  });
});
