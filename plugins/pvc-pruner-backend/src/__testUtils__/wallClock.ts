/**
 * Runs `fn` with this process's wall clock (Date only) moved by `skewMs`, as
 * on a replica whose clock is off; timers, I/O and the monotonic clock run
 * as usual.
 */
export async function withWallClockSkew<T>(
  skewMs: number,
  fn: () => Promise<T>,
): Promise<T> {
  jest.useFakeTimers({
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
  });
  jest.setSystemTime(Date.now() + skewMs);
  try {
    return await fn();
  } finally {
    jest.useRealTimers();
  }
}
