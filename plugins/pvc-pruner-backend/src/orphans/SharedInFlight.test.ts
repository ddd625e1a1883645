import { SharedInFlight } from './SharedInFlight';

describe('SharedInFlight', () => {
  it('shares a run between overlapping calls of one key, and only those', async () => {
    const shared = new SharedInFlight<number>();
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>(resolve => {
      release = resolve;
    });
    const slow = () => gate.then(() => ++runs);

    const overlapping = [shared.run('a', slow), shared.run('a', slow)];
    const other = shared.run('b', slow);
    release();

    expect(await Promise.all(overlapping)).toEqual([1, 1]);
    expect(await other).toBe(2);
    expect(await shared.run('a', slow)).toBe(3);
  });

  it('lets a failure reach every caller of the run, then runs afresh', async () => {
    const shared = new SharedInFlight<number>();
    const failing = () => Promise.reject(new Error('refused'));

    await expect(
      Promise.all([shared.run('a', failing), shared.run('a', failing)]),
    ).rejects.toThrow('refused');
    await expect(shared.run('a', async () => 7)).resolves.toBe(7);
  });
});
