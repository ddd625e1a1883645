/** How often a job's reasons to stop are looked at for the work its steps wait on. */
const POLL_MS = 250;

/**
 * A signal that aborts when `stop` does (the instance shuts down, its reason
 * kept) or, looked at every POLL_MS, once `reasonToStop` names one (a lost
 * Lease, a guard's abort reason), with that reason as an Error.
 */
export function stopSignal(
  stop: AbortSignal,
  reasonToStop: () => string | undefined,
  pollMs = POLL_MS,
): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onStop = () => controller.abort(stop.reason);
  if (stop.aborted) onStop();
  else stop.addEventListener('abort', onStop, { once: true });
  const poll = setInterval(() => {
    const reason = reasonToStop();
    if (reason && !controller.signal.aborted)
      controller.abort(new Error(reason));
  }, pollMs);
  poll.unref?.();
  return {
    signal: controller.signal,
    dispose() {
      clearInterval(poll);
      stop.removeEventListener('abort', onStop);
    },
  };
}
