import { parseLabelSelector, requiredKeyOf } from './labelSelector';

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

  it.each([
    'tier>1',
    'tier in db',
    'a=b=c',
    'tier in (a',
    '=x',
    // Keys and values kube-apiserver refuses with a 400.
    'a/b/c=x',
    'Backstage.io/kubernetes-id=x',
    'tier.=db',
    `${'k'.repeat(64)}=x`,
    `tier=${'v'.repeat(64)}`,
    'tier in (db, -x)',
  ])('leaves %s to the API server', selector =>
    expect(parseLabelSelector(selector)).toBeUndefined(),
  );

  describe('names every object inherits are not labels', () => {
    // What kube-apiserver answers for labels that lack the key: a plain map lookup.
    const EXPECTED: Array<[string, boolean]> = [
      ['%s', false],
      ['!%s', true],
      ['%s=x', false],
      ['%s==x', false],
      ['%s!=x', true],
      ['%s in (x, y)', false],
      ['%s notin (x, y)', true],
    ];
    const cases = [
      'constructor',
      'toString',
      'hasOwnProperty',
      'valueOf',
    ].flatMap(key =>
      EXPECTED.map(
        ([form, expected]) => [form.replace('%s', key), expected] as const,
      ),
    );

    it.each(cases)(
      '%s against labels without that key matches: %s',
      (selector, expected) => {
        const matches = parseLabelSelector(selector)!;
        expect(matches({ tier: 'db' })).toBe(expected);
        expect(matches({})).toBe(expected);
        expect(matches(undefined)).toBe(expected);
      },
    );

    it('still finds such a key when the object has it', () => {
      const own = { constructor: 'x', toString: 'y' };
      expect(parseLabelSelector('constructor=x')!(own)).toBe(true);
      expect(parseLabelSelector('toString in (y)')!(own)).toBe(true);
      expect(parseLabelSelector('!constructor')!(own)).toBe(false);
    });

    it.each([
      '__proto__',
      '!__proto__',
      '__proto__=x',
      '__proto__!=x',
      '__proto__ in (x)',
      '__proto__ notin (x)',
    ])(
      '%s is refused by kube-apiserver (a key starts alphanumeric), so it is left to it',
      selector => expect(parseLabelSelector(selector)).toBeUndefined(),
    );
  });
});

describe('requiredKeyOf', () => {
  it.each<[string, string | undefined]>([
    ['app=db', 'app'],
    ['app==db', 'app'],
    ['tier in (db, cache)', 'tier'],
    ['app', 'app'],
    ['!legacy,app=db', 'app'],
    ['app!=db', undefined],
    ['!nonexistent', undefined],
    ['tier notin (x)', undefined],
    ['', undefined],
    ['tier > 3', undefined],
  ])('%j requires %j', (selector, key) => {
    expect(requiredKeyOf(selector)).toBe(key);
  });
});
