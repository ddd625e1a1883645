import { parseLabelSelector } from './labelSelector';

describe('parseLabelSelector', () => {
  const labels = { 'backstage.io/kubernetes-id': 'orders', tier: 'db' };

  it.each([
    ['backstage.io/kubernetes-id=orders', true],
    ['backstage.io/kubernetes-id==orders', true],
    ['backstage.io/kubernetes-id=cart', false],
    ['backstage.io/kubernetes-id=orders,tier=db', true],
    ['backstage.io/kubernetes-id=orders, tier!=db', false],
    ['tier in (db, cache)', true],
    ['tier in (cache),backstage.io/kubernetes-id=orders', false],
    ['tier notin (cache)', true],
    ['env notin (prod)', true],
    ['tier', true],
    ['!tier', false],
    ['!env', true],
    ['env=', false],
    ['', true],
  ])('%s matches the labels: %s', (selector, expected) => {
    expect(parseLabelSelector(selector)!(labels)).toBe(expected);
  });

  it('matches an object without labels only where absence is asked for', () => {
    expect(parseLabelSelector('tier!=db')!(undefined)).toBe(true);
    expect(parseLabelSelector('tier=db')!(undefined)).toBe(false);
  });

  it.each(['tier>1', 'tier in db', 'a=b=c', 'tier in (a', '=x'])(
    'leaves %s to the API server',
    selector => expect(parseLabelSelector(selector)).toBeUndefined(),
  );
});
