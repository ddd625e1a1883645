import { KeptJson } from './KeptJson';

describe('KeptJson', () => {
  it('writes what JSON.stringify writes', () => {
    const values: unknown[] = [
      {
        a: 1,
        b: undefined,
        c: [1, undefined, () => 0, null, 'x"\u2028\n'],
        d: { e: new Date('2026-12-01T00:00:00.000Z'), f: NaN, g: -0 },
        h: [],
        i: {},
        j: true,
        k: () => 1,
        // A hole at index 1, which JSON.stringify writes as null.
        l: Object.assign(new Array(3), { 0: 1, 2: 3 }),
        'quoted "key"': 'ü',
      },
      [{ a: 1 }, [2, [3]]],
    ];
    const json = new KeptJson();
    for (const value of values)
      expect(json.stringify(value, new Set())).toBe(JSON.stringify(value));
  });

  it('writes a part once and its kept text every time after, wherever it appears', () => {
    const part = { name: 'orders-db', orphans: [{ name: 'data-orders-db-1' }] };
    const json = new KeptJson();
    const answer = { clusters: [{ cluster: 'prod', statefulSets: [part] }] };
    const first = json.stringify(answer, new Set([part]));
    expect(first).toBe(JSON.stringify(answer));
    const other = { items: [part, { n: 2 }] };
    const expected = `{"items":[${JSON.stringify(part)},{"n":2}]}`;
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      expect(json.stringify(other, new Set([part]))).toBe(expected);
      expect(stringify.mock.calls.filter(([v]) => v === part)).toEqual([]);
    } finally {
      stringify.mockRestore();
    }
  });
});
