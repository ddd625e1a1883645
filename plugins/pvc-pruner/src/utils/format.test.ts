import { formatAge, ordinalsText, plural } from './format';

describe('format', () => {
  it('describes the ordinals a StatefulSet runs', () => {
    expect(ordinalsText({ ordinals: { start: 0, end: 2 } })).toBe(
      'runs ordinals 0–1',
    );
    expect(ordinalsText({ ordinals: { start: 3, end: 4 } })).toBe(
      'runs ordinal 3',
    );
    expect(ordinalsText({ ordinals: { start: 0, end: 0 } })).toBe(
      'runs no pods',
    );
  });

  it('formats ages', () => {
    const now = Date.parse('2026-11-30T12:00:00Z');
    expect(formatAge('2026-11-30T11:59:30Z', now)).toBe('30s');
    expect(formatAge('2026-11-30T11:00:00Z', now)).toBe('1h');
    expect(formatAge('2026-11-27T12:00:00Z', now)).toBe('3d');
    expect(formatAge(undefined, now)).toBe('unknown age');
  });

  it('pluralises', () => {
    expect(plural(1, 'claim')).toBe('1 claim');
    expect(plural(2, 'claim')).toBe('2 claims');
  });
});
