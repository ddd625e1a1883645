import { labelValue, snapshotName } from './snapshotMetadata';

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

describe('snapshot names and label values', () => {
  it('keeps a valid label value, and hashes anything else into one', () => {
    expect(labelValue('orders-db')).toBe('orders-db');
    const ref = labelValue('component:default/orders');
    expect(ref).toMatch(/^sha256-[0-9a-f]{56}$/);
    expect(ref).toHaveLength(63);
    expect(labelValue('component:default/orders')).toBe(ref);
    expect(labelValue('x'.repeat(64))).toMatch(/^sha256-/);
  });

  it('names the snapshot after the claim and the job, within 253 characters and ending as a name must', () => {
    expect(snapshotName('data-web-3', '3f2a9c1e-aaaa')).toBe(
      'data-web-3-3f2a9c1e',
    );
    const long = snapshotName(`${'a'.repeat(243)}.-b`, '3f2a9c1e-aaaa');
    expect(long.length).toBeLessThanOrEqual(253);
    expect(long).toMatch(NAME);
    expect(long.endsWith('a-3f2a9c1e')).toBe(true);
  });
});
