/**
 * Simulated time for the controllers. Kubernetes durations (grace periods,
 * start-up, provisioning) are multiplied by `timeFactor`, so 0.01 runs a
 * 30 s grace period in 300 ms. Object timestamps stay in real time.
 */
export class SimClock {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(public timeFactor: number) {}

  /** Real milliseconds for a simulated duration in seconds. */
  toMillis(seconds: number) {
    return Math.max(0, seconds * 1000 * this.timeFactor);
  }

  /** Runs fn after a simulated delay; returns a cancel function. */
  after(seconds: number, fn: () => void): () => void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, this.toMillis(seconds));
    timer.unref();
    this.timers.add(timer);
    return () => {
      clearTimeout(timer);
      this.timers.delete(timer);
    };
  }

  stop() {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
