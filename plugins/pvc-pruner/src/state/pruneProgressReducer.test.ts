import { deriveProgress, summaryFromProgress } from './pruneProgressReducer';
import { GiB, eventFactory } from '../__testUtils__/fixtures';

describe('deriveProgress', () => {
  const confirmed = [
    { name: 'a', uid: '1', bytes: GiB },
    { name: 'b', uid: '2', bytes: GiB },
  ];

  it('counts claims with a final event as done', () => {
    const event = eventFactory();
    const state = deriveProgress(confirmed, [
      event('job-started'),
      event('pvc-deleting', { pvc: 'a' }),
      event('pvc-deleted', {
        pvc: 'a',
        outcome: {
          name: 'a',
          uid: '1',
          bytes: GiB,
          volume: { name: 'pv-a', fate: 'unknown' },
        },
      }),
      event('volume-deleted', {
        pvc: 'a',
        outcome: {
          name: 'a',
          uid: '1',
          bytes: GiB,
          volume: { name: 'pv-a', fate: 'deleted' },
        },
      }),
      event('pvc-deleting', { pvc: 'b' }),
    ]);
    expect(state.done).toBe(1);
    expect(state.total).toBe(2);
    expect(state.started).toBe(true);
    expect(state.pvcs.map(p => p.state)).toEqual(['deleted', 'deleting']);
    expect(state.pvcs[0].volume?.fate).toBe('deleted');
    expect(summaryFromProgress(state).bytesReclaimed).toBe(GiB);
  });

  it('counts a claim still terminating as done but not deleted, with what holds it', () => {
    const event = eventFactory();
    const held = {
      name: 'b',
      uid: '2',
      bytes: GiB,
      finalizers: ['acc.example/backup-hold'],
      volume: { name: 'pv-b', fate: 'unknown' as const },
    };
    const state = deriveProgress(confirmed, [
      event('job-started'),
      event('pvc-deleting', { pvc: 'b' }),
      event('pvc-terminating', { pvc: 'b', outcome: held }),
    ]);
    expect(state.done).toBe(1);
    expect(state.pvcs.find(p => p.name === 'b')).toMatchObject({
      state: 'terminating',
      finalizers: ['acc.example/backup-hold'],
    });
    const summary = summaryFromProgress(state);
    expect(summary.deleted).toEqual([]);
    expect(summary.terminating).toEqual([
      expect.objectContaining({
        name: 'b',
        finalizers: ['acc.example/backup-hold'],
      }),
    ]);
    expect(summary.bytesReclaimed).toBe(0);
  });

  it('keeps a final state when a late pvc-deleting arrives, and lists unconfirmed claims', () => {
    const event = eventFactory();
    const state = deriveProgress(confirmed, [
      event('pvc-skipped', {
        pvc: 'a',
        outcome: { name: 'a', uid: '1', reason: 'gone' },
      }),
      event('pvc-deleting', { pvc: 'a' }),
      event('pvc-failed', {
        pvc: 'z',
        outcome: { name: 'z', uid: '9', reason: 'boom' },
      }),
      event('job-finished', { status: 'failed' }),
    ]);
    expect(state.pvcs.map(p => [p.name, p.state, p.reason])).toEqual([
      ['a', 'skipped', 'gone'],
      ['b', 'pending', undefined],
      ['z', 'failed', 'boom'],
    ]);
    expect(state.total).toBe(3);
    expect(state.status).toBe('failed');
  });
});
