import { emptyPruneSummary, TERMINAL_JOB_STATUSES } from './types';

describe('TERMINAL_JOB_STATUSES', () => {
  it('holds every status a job ends in, and neither of the two it runs through', () => {
    expect(TERMINAL_JOB_STATUSES).toEqual([
      'succeeded',
      'incomplete',
      'failed',
      'aborted',
      'interrupted',
    ]);
    expect(TERMINAL_JOB_STATUSES).not.toContain('queued');
    expect(TERMINAL_JOB_STATUSES).not.toContain('running');
  });
});

describe('emptyPruneSummary', () => {
  it('is a fresh summary each time, so one job cannot write into another', () => {
    const first = emptyPruneSummary();
    first.bytesReclaimed = 5;
    const second = emptyPruneSummary();
    expect(second).toEqual({
      deleted: [],
      terminating: [],
      skipped: [],
      failed: [],
      bytesReclaimed: 0,
    });
    for (const list of ['deleted', 'terminating', 'skipped', 'failed'] as const)
      expect(second[list]).not.toBe(first[list]);
  });
});
