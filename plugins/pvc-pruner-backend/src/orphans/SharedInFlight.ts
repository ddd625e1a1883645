/**
 * Calls with the same key that overlap share one run: a burst of identical
 * live scans (many viewers while a cache lists) costs the cluster one scan.
 */
export class SharedInFlight<T> {
  private readonly running = new Map<string, Promise<T>>();

  run(key: string, fn: () => Promise<T>): Promise<T> {
    const running = this.running.get(key);
    if (running) return running;
    const started = fn().finally(() => this.running.delete(key));
    this.running.set(key, started);
    return started;
  }
}
