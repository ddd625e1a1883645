/** Polls `check` every 10 ms until it returns something truthy; fails naming `what` after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | false,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise(r => setTimeout(r, 10));
  }
}
