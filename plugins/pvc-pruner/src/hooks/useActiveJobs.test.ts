import { act, renderHook } from '@testing-library/react';
import { useActiveJobs, statefulSetKey } from './useActiveJobs';
import { makeJob } from '../__testUtils__/fixtures';

describe('useActiveJobs', () => {
  it('attaches to the newest live job of each StatefulSet, once', () => {
    const history = [
      makeJob({ id: 'new', status: 'running' }),
      makeJob({ id: 'old', status: 'queued' }),
      makeJob({ id: 'done', statefulSet: 'cache', status: 'succeeded' }),
    ];
    const { result, rerender } = renderHook(({ jobs }) => useActiveJobs(jobs), {
      initialProps: { jobs: history },
    });
    const key = statefulSetKey({
      cluster: 'prod',
      namespace: 'shop',
      statefulSet: 'db',
    });
    expect(Object.keys(result.current.jobs)).toEqual([key]);
    expect(result.current.jobs[key]).toMatchObject({
      id: 'new',
      reattached: true,
    });

    act(() => result.current.finish('new'));
    expect(result.current.jobs[key].finished).toBe(true);
    rerender({ jobs: [...history] });
    expect(result.current.jobs[key].id).toBe('new');

    act(() => result.current.dismiss('new'));
    expect(result.current.jobs).toEqual({});
  });
});
