import { formatBytes, parseQuantity } from './quantity';

describe('parseQuantity', () => {
  it.each([
    ['20Gi', 20 * 2 ** 30],
    ['1.5Gi', 1.5 * 2 ** 30],
    ['500M', 500e6],
    ['1e9', 1e9],
    ['1E3', 1000],
    ['2Ti', 2 * 2 ** 40],
    ['128974848', 128974848],
    [' 1Ki ', 1024],
  ])('reads %s', (text, bytes) => {
    expect(parseQuantity(text)).toBe(bytes);
  });

  it.each(['', 'Gi', '20GB', '20 Gi', '1.2.3', 'abc'])('rejects %j', text => {
    expect(parseQuantity(text)).toBeUndefined();
  });
});

describe('formatBytes', () => {
  it.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [20 * 2 ** 30, '20 GiB'],
    [1.5 * 2 ** 30, '1.5 GiB'],
    [340 * 2 ** 30, '340 GiB'],
    [2 ** 40, '1 TiB'],
  ])('formats %d as %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });
});
