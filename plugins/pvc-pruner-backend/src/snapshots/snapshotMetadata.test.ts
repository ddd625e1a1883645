import {
  labelValue,
  SNAPSHOT_ANNOTATIONS,
  snapshotMetadata,
  snapshotName,
} from './snapshotMetadata';

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
    expect(long).toMatch(/^a+-[0-9a-f]{10}-3f2a9c1e$/);
  });

  it('gives two long claim names that share their first 244 characters two names in one job', () => {
    const stem = 'a'.repeat(250);
    const one = snapshotName(`${stem}-0`, '3f2a9c1e-aaaa');
    const two = snapshotName(`${stem}-1`, '3f2a9c1e-aaaa');
    expect(one).not.toBe(two);
    for (const name of [one, two]) {
      expect(name.length).toBeLessThanOrEqual(253);
      expect(name).toMatch(NAME);
    }
  });

  it('keeps a claim-labels annotation of at most 16 KiB, saying so when the labels were more', () => {
    const labels = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`l${i}`, 'v'.repeat(200)]),
    );
    const { annotations } = snapshotMetadata({
      claim: { metadata: { name: 'data-web-0', labels } },
      jobId: 'j',
      statefulSet: 'web',
      requestedBy: 'user:default/alice',
      expiresAt: new Date(0),
    });
    const kept = annotations[SNAPSHOT_ANNOTATIONS.claimLabels];
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(16 * 1024);
    expect(JSON.parse(kept)).toEqual({
      'pvc-pruner.backstage.io/labels-not-kept': expect.stringContaining(
        'more than the 16384 a snapshot keeps',
      ),
    });
  });
});
