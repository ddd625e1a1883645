import { timestampToIso } from './timestamps';

describe('timestampToIso', () => {
  it('reads what either database returns', () => {
    const iso = '2025-06-01T12:00:00.123Z';
    expect(timestampToIso(new Date(iso))).toBe(iso);
    expect(timestampToIso(Date.parse(iso))).toBe(iso);
    expect(timestampToIso(String(Date.parse(iso)))).toBe(iso);
    expect(timestampToIso('2025-06-01 12:00:00')).toBe(
      '2025-06-01T12:00:00.000Z',
    );
    expect(timestampToIso('2025-06-01T14:00:00.123+02:00')).toBe(iso);
    expect(() => timestampToIso('garbage')).toThrow();
  });
});
